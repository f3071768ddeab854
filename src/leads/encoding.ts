// The text encodings a lead file may come in, and how one is recognised from the file's
// first bytes: a byte-order mark names UTF-8 or UTF-16 (Excel's "Unicode text" export is
// UTF-16 LE with a BOM); without one, bytes that are not valid UTF-8 mean the file was
// saved by a Windows program in its ANSI code page, Windows-1252 in the West.

import { TextDecoder } from 'node:util';

export const ENCODINGS = ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252'] as const;
export type Encoding = (typeof ENCODINGS)[number];

const ALIASES: Record<string, Encoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'utf-16le': 'utf-16le',
  utf16le: 'utf-16le',
  'utf-16be': 'utf-16be',
  utf16be: 'utf-16be',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  win1252: 'windows-1252',
  // What most tools call Latin-1 is Windows-1252 in practice (WHATWG decodes it so too).
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
};

/** How an encoding is named in the summary. */
export function encodingName(e: Encoding): string {
  return e === 'utf-8' ? 'UTF-8' : e === 'utf-16le' ? 'UTF-16 LE' : e === 'utf-16be' ? 'UTF-16 BE' : 'Windows-1252';
}

/** The encoding named by `--encoding`, or undefined when the name is unknown. */
export function parseEncoding(name: string): Encoding | undefined {
  return ALIASES[name.trim().toLowerCase()];
}

/** What the first bytes of a file say: its encoding and how many BOM bytes to skip. */
export interface DetectedEncoding {
  encoding: Encoding;
  bomBytes: number;
}

/**
 * Detects the encoding from the file's first bytes (pass up to 64 KB). `forced` (from
 * `--encoding`) wins over detection, but a matching BOM is still skipped.
 */
export function detectEncoding(head: Uint8Array, forced?: Encoding): DetectedEncoding {
  const bom = bomOf(head);
  if (forced) return { encoding: forced, bomBytes: bom && bom.encoding === forced ? bom.bomBytes : 0 };
  if (bom) return bom;
  return { encoding: isUtf8(head) ? 'utf-8' : 'windows-1252', bomBytes: 0 };
}

function bomOf(b: Uint8Array): DetectedEncoding | undefined {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { encoding: 'utf-8', bomBytes: 3 };
  if (b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', bomBytes: 2 };
  if (b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', bomBytes: 2 };
  return undefined;
}

/** Whether the bytes are valid UTF-8, allowing a multi-byte sequence cut off at the end of the sample. */
function isUtf8(b: Uint8Array): boolean {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len === 0) return false;
    for (let k = 1; k < len; k++) {
      if (i + k >= n) return true; // the sample ends inside this character
      if ((b[i + k]! & 0xc0) !== 0x80) return false;
    }
    i += len;
  }
  return true;
}

/** A decoder for one file: streams chunks, keeps characters split across chunks whole. */
export function decoderFor(encoding: Encoding): TextDecoder {
  // ignoreBOM: the caller skips the BOM bytes itself (they are counted in detectEncoding),
  // and a U+FEFF later in the file is data.
  return new TextDecoder(encoding, { ignoreBOM: true });
}

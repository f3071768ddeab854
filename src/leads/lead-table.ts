// A lead file as rows of text fields, whatever it was saved as: CSV in any of the usual
// delimiters and encodings (detected, or set with --delimiter / --encoding) or an .xlsx
// workbook. Everything downstream (columns, validation, import) sees CsvRecords whose
// `line` is the file's physical line, or the sheet's row number.
import fs from 'node:fs';
import path from 'node:path';
import { readCsvChunks, type CsvRecord } from './csv.js';
import { readDelimitedChunks } from './csv-delimited.js';
import { detectDelimiter, firstLine, type Delimiter } from './delimiter.js';
import { decoderFor, detectEncoding, type Encoding } from './encoding.js';
import { readXlsxChunks } from './xlsx.js';

/** How a file was read: printed in the summary. */
export type TableFormat =
  | { type: 'csv'; encoding: Encoding; delimiter: Delimiter; bom: boolean }
  | { type: 'xlsx'; sheet: string };

export interface TableOptions {
  delimiter?: Delimiter;
  encoding?: Encoding;
  /** .xlsx: the sheet to read (default: the first). */
  sheet?: string;
}

/** The file is not a table campaignd can read (an old .xls, a zip that is no workbook, …). */
export class TableFormatError extends Error {}

const HEAD_BYTES = 64 * 1024;

/** Reads the first bytes of the file (for detection). */
async function readHead(file: string): Promise<Buffer> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Whether bytes that are not UTF-8 look like Windows-1252 text: a header line without
 * control characters, and mostly ASCII (a Western text has an accent here and there; a
 * binary file, or one in another code page, has them everywhere). Control bytes in later
 * rows are those rows' problem (invalid leads), not the file's.
 */
function looksLikeText(head: Buffer): boolean {
  let high = 0;
  let inHeader = true;
  for (const b of head) {
    if (b === 0x0a || b === 0x0d) inHeader = false;
    else if (inHeader && b < 0x20 && b !== 0x09) return false;
    if (b >= 0x80) high++;
  }
  return high <= head.length * 0.3;
}

/**
 * Streams a lead file's records a chunk at a time; `onFormat` learns how the file is
 * read before the first chunk.
 */
export async function* readTableChunks(file: string, opts: TableOptions = {}, onFormat?: (format: TableFormat) => void): AsyncGenerator<CsvRecord[]> {
  const head = await readHead(file);
  const ext = path.extname(file).toLowerCase();
  const zip = head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
  if (zip || ext === '.xlsx' || ext === '.xlsm') {
    if (!zip) throw new TableFormatError('the file is named .xlsx but is not an Excel workbook: save it as "Excel Workbook (.xlsx)" or as CSV');
    yield* readXlsxChunks(file, { ...(opts.sheet !== undefined ? { sheet: opts.sheet } : {}), onSheet: (sheet) => onFormat?.({ type: 'xlsx', sheet }) });
    return;
  }
  if (head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0) {
    throw new TableFormatError('this is an old Excel .xls workbook, which campaignd does not read: save it as "Excel Workbook (.xlsx)" or as CSV');
  }
  if (opts.sheet !== undefined) throw new TableFormatError('--sheet applies to .xlsx workbooks; this file is read as CSV');
  const { encoding, bomBytes } = detectEncoding(head, opts.encoding);
  if (!opts.encoding && encoding === 'windows-1252' && !looksLikeText(head)) {
    throw new TableFormatError('the file is not readable text (neither UTF-8 nor Windows-1252): save the lead file as CSV or .xlsx, or name its encoding with --encoding');
  }
  const delimiter = opts.delimiter ?? detectDelimiter(firstLine(decoderFor(encoding).decode(head.subarray(bomBytes), { stream: true })));
  onFormat?.({ type: 'csv', encoding, delimiter, bom: bomBytes > 0 });
  // FAST_PATH: plain UTF-8 with commas, the format campaignd writes and most files
  // have, keeps the hand-written reader (csv.ts), because csv-parse cannot hold the
  // import's goal of 50,000 rows/s: csv-parse 7.0.3 alone parses a million rows in
  // ~1.8 s here against ~0.6 s (~3.7 s with its `info` option), and the whole million-row
  // `leads import` of the same rows ran at 45,700 rows per CPU-second through csv-parse
  // (';'-separated) against 58,300 through this path (bench/import-leads.ts, 2026-11-25).
  // Every other delimiter and encoding goes through csv-parse (csv-delimited.ts).
  if (encoding === 'utf-8' && delimiter === ',') {
    yield* readCsvChunks(file);
    return;
  }
  yield* readDelimitedChunks(file, { encoding, bomBytes, delimiter });
}

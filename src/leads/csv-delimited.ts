// Every delimited lead file except plain UTF-8 with commas goes through csv-parse (a
// maintained parser: quotes, doubled quotes, CR/LF/CRLF, ragged rows), fed text that
// src/leads/encoding.ts decoded. Plain UTF-8 commas keep the hand-written reader in
// csv.ts: see the note on FAST_PATH in lead-table.ts.
//
// Line numbers are counted here, not taken from csv-parse: its `info.lines` is the line
// a record ends on, and counts a CRLF inside a quoted field as two lines (csv-parse 7.0.3).
// A record starts on the line after the previous one ended; it ends as many lines later
// as its fields hold line breaks. Blank lines arrive as one empty field and advance the
// count like any record.
import fs from 'node:fs';
import { parse, type CsvError } from 'csv-parse';

import type { CsvRecord } from './csv.js';
import type { Delimiter } from './delimiter.js';
import { decoderFor, type Encoding } from './encoding.js';

const CHUNK_BYTES = 64 * 1024;

/** Line breaks inside a field (CRLF counts once, like the file's own line ends). */
function lineBreaks(field: string): number {
  if (field.indexOf('\n') < 0 && field.indexOf('\r') < 0) return 0;
  return field.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/** Streams the records of a delimited file, a chunk's worth at a time. */
export async function* readDelimitedChunks(file: string, opts: { encoding: Encoding; bomBytes: number; delimiter: Delimiter }): AsyncGenerator<CsvRecord[]> {
  let out: CsvRecord[] = [];
  let nextLine = 1;
  const parser = parse({
    delimiter: opts.delimiter,
    relax_column_count: true,
    // A quote inside an unquoted field is text ("5" Street), as the hand-written reader takes it.
    relax_quotes: true,
    skip_records_with_error: true,
    // Records are taken synchronously here and never pushed into the stream (null).
    on_record: (fields: string[]) => {
      const line = nextLine;
      let breaks = 0;
      for (const f of fields) breaks += lineBreaks(f);
      nextLine = line + 1 + breaks;
      // Blank lines, and rows of nothing but separators, carry no data.
      if (!fields.every((f) => f === '')) out.push({ line, fields });
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      const line = nextLine;
      nextLine++;
      if (err?.code === 'CSV_QUOTE_NOT_CLOSED') out.push({ line, fields: [], unterminated: true });
      else out.push({ line, fields: [], problem: `unreadable row: ${err?.message ?? 'not CSV'}` });
      return undefined;
    },
  });
  let failure: Error | undefined;
  parser.on('error', (err: Error) => (failure = err));
  // Nothing is pushed (on_record returns null), but keep the readable side flowing.
  parser.resume();
  const decoder = decoderFor(opts.encoding);
  const stream = fs.createReadStream(file, { start: opts.bomBytes, highWaterMark: CHUNK_BYTES });
  try {
    for await (const bytes of stream as AsyncIterable<Buffer>) {
      parser.write(decoder.decode(bytes, { stream: true }));
      if (failure) throw failure;
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
    const rest = decoder.decode();
    if (rest) parser.write(rest);
    parser.end();
    if (failure) throw failure;
    if (out.length > 0) yield out;
  } finally {
    stream.destroy();
  }
}

import fs from 'node:fs';

// A streaming RFC 4180 reader of our own: lead files reach a million rows, so the file is
// read in chunks and records are handed out as they complete, never the whole file in
// memory. Lenient where spreadsheets are sloppy (text after a closing quote is kept, a
// lone CR ends a line), strict where it matters (line numbers are physical lines).

/** One CSV record and the physical line (1-based) where it starts. */
export interface CsvRecord {
  line: number;
  fields: string[];
  /** The file ended inside a quoted field that starts in this record. */
  unterminated?: boolean;
  /** The row could not be read as fields (csv-parse's reason); the row becomes an invalid lead. */
  problem?: string;
  /** .xlsx: indexes of the fields that were cells stored as numbers (see normaliseNumberCell). */
  numeric?: number[];
}

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;
const BOM = 0xfeff;

/** Incremental parser: feed chunks with `push`, then call `end`; records go to `out`. */
export class CsvParser {
  private fields: string[] = [];
  private field = '';
  private fieldStart = true;
  private inQuotes = false;
  private quoteSeen = false;
  private prevCr = false;
  private skipLf = false;
  private first = true;
  private line = 1;
  private recordLine = 1;

  /** Parses one chunk; completed records are appended to `out`. */
  push(chunk: string, out: CsvRecord[]): void {
    const n = chunk.length;
    let i = 0;
    if (n === 0) return;
    if (this.first) {
      this.first = false;
      if (chunk.charCodeAt(0) === BOM) i = 1;
    }
    let seg = i;
    for (; i < n; i++) {
      const c = chunk.charCodeAt(i);
      if (this.skipLf) {
        this.skipLf = false;
        if (c === LF) {
          seg = i + 1;
          continue;
        }
      }
      if (this.inQuotes) {
        if (this.quoteSeen) {
          this.quoteSeen = false;
          if (c === QUOTE) {
            // A doubled quote inside a quoted field is one literal quote.
            this.field += '"';
            seg = i + 1;
            continue;
          }
          // The previous quote closed the field; handle `c` as an unquoted character.
          this.inQuotes = false;
        } else if (c === QUOTE) {
          this.field += chunk.slice(seg, i);
          this.quoteSeen = true;
          seg = i + 1;
          continue;
        } else {
          // Newlines inside quotes belong to the value but still advance the line count.
          if (c === CR || (c === LF && !this.prevCr)) this.line++;
          this.prevCr = c === CR;
          continue;
        }
      }
      if (c === COMMA) {
        this.fields.push(this.field + chunk.slice(seg, i));
        this.field = '';
        this.fieldStart = true;
        seg = i + 1;
      } else if (c === LF || c === CR) {
        this.fields.push(this.field + chunk.slice(seg, i));
        this.field = '';
        this.emit(out, false);
        this.line++;
        this.recordLine = this.line;
        this.skipLf = c === CR;
        seg = i + 1;
      } else if (c === QUOTE && this.fieldStart) {
        this.inQuotes = true;
        this.prevCr = false;
        this.fieldStart = false;
        seg = i + 1;
      } else {
        this.fieldStart = false;
      }
    }
    if (seg < n) this.field += chunk.slice(seg, n);
  }

  /** Flushes the last record (a file need not end with a newline). */
  end(out: CsvRecord[]): void {
    const unterminated = this.inQuotes && !this.quoteSeen;
    this.inQuotes = false;
    this.quoteSeen = false;
    if (this.fields.length > 0 || this.field !== '' || !this.fieldStart) {
      this.fields.push(this.field);
      this.field = '';
      this.emit(out, unterminated);
    }
  }

  private emit(out: CsvRecord[], unterminated: boolean): void {
    const fields = this.fields;
    this.fields = [];
    this.fieldStart = true;
    // Blank lines, and rows of nothing but separators (",,,", as spreadsheets export
    // trailing rows), carry no data.
    if (!unterminated && fields.every((f) => f === '')) return;
    out.push(unterminated ? { line: this.recordLine, fields, unterminated } : { line: this.recordLine, fields });
  }
}

/** Streams the records of a CSV file (UTF-8, optional BOM, LF / CRLF / CR line ends). */
export async function* readCsvRecords(file: string, opts: { highWaterMark?: number } = {}): AsyncGenerator<CsvRecord> {
  for await (const records of readCsvChunks(file, opts)) yield* records;
}

/**
 * Bytes read at a time. Below 128 KB on purpose: V8 puts any larger object, such as the
 * string a bigger chunk decodes to, straight into the old generation, and the records
 * sliced from it then die there too. With 256 KB chunks a million-row import's old space
 * peaked at ~90 MB of such garbage (process peak ~245 MiB); with 64 KB at ~24 MB (~165 MiB),
 * and the import ran ~7% faster (bench/RESULTS.md, import-leads).
 */
const CHUNK_BYTES = 64 * 1024;

/**
 * The same, a chunk's worth of records at a time: one await per chunk instead of one
 * per row, which matters at a million rows.
 */
export async function* readCsvChunks(file: string, opts: { highWaterMark?: number } = {}): AsyncGenerator<CsvRecord[]> {
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: opts.highWaterMark ?? CHUNK_BYTES });
  const parser = new CsvParser();
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const out: CsvRecord[] = [];
      parser.push(chunk, out);
      if (out.length > 0) yield out;
    }
    const out: CsvRecord[] = [];
    parser.end(out);
    if (out.length > 0) yield out;
  } finally {
    stream.destroy();
  }
}

/** Parses a whole CSV text at once (tests, small inputs). */
export function parseCsv(text: string): CsvRecord[] {
  const parser = new CsvParser();
  const out: CsvRecord[] = [];
  parser.push(text, out);
  parser.end(out);
  return out;
}

// .xlsx lead files: one sheet streamed row by row. An .xlsx is a zip of XML parts; the
// zip is read with yauzl (entries opened on demand, each inflated as a stream) and the XML
// with saxes, both maintained npm packages. The sheet-level readers on npm were measured
// on a 1M-row workbook first (README "Excel workbooks"): exceljs's streaming
// WorkbookReader peaked at 897 MB, xlstream at 308 MB and 28.6k rows/s, xlsx-stream-reader
// at 318 MB and 15.8k rows/s, each before any import work; all of them hold the shared
// strings as JavaScript strings. This reader keeps them in a StringTable instead.
//
// Row numbers are the sheet's own (the `r` of each row, what Excel shows), so messages
// point at the row a person sees. Numbers keep the digits written in the file: a phone
// number stored as a number (4915102000001, or shown as 2.12556E+09) is taken from the
// cell's text, never through a rounded float.
import { TextDecoder } from 'node:util';
import { SaxesParser } from 'saxes';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { Readable } from 'node:stream';
import type { CsvRecord } from './csv.js';
import { StringTable } from './string-table.js';

/** The workbook is not a readable .xlsx, or has no such sheet. */
export class WorkbookError extends Error {}

interface SheetRef {
  name: string;
  /** Zip path of the sheet's XML. */
  path: string;
}

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, zip) => (err ? reject(new WorkbookError(`not a readable .xlsx workbook (${err.message})`)) : resolve(zip)));
  });
}

function listEntries(zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    zip.on('entry', (e: Entry) => {
      entries.set(e.fileName, e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', (err: Error) => reject(new WorkbookError(`not a readable .xlsx workbook (${err.message})`)));
    zip.readEntry();
  });
}

function openEntry(zip: ZipFile, entry: Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))));
}

/** Streams one XML part through a saxes parser set up by `setup`; `flush` runs after each chunk. */
async function* parsePart(zip: ZipFile, entry: Entry, setup: (p: SaxesParser) => void): AsyncGenerator<void> {
  const parser = new SaxesParser();
  setup(parser);
  const decoder = new TextDecoder('utf-8');
  const stream = await openEntry(zip, entry);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      parser.write(decoder.decode(chunk, { stream: true }));
      yield;
    }
    parser.write(decoder.decode());
    parser.close();
    yield;
  } catch (err) {
    throw err instanceof WorkbookError ? err : new WorkbookError(`${entry.fileName} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    stream.destroy();
  }
}

async function readWhole(zip: ZipFile, entry: Entry, setup: (p: SaxesParser) => void): Promise<void> {
  for await (const _ of parsePart(zip, entry, setup));
}

/** Sheet names in the workbook's order, with their XML parts. */
async function readSheets(zip: ZipFile, entries: Map<string, Entry>): Promise<{ sheets: SheetRef[]; sharedStrings?: string }> {
  const workbook = entries.get('xl/workbook.xml');
  const rels = entries.get('xl/_rels/workbook.xml.rels');
  if (!workbook || !rels) throw new WorkbookError('not an .xlsx workbook (no xl/workbook.xml): save the file as "Excel Workbook (.xlsx)" or as CSV');
  const targets = new Map<string, string>();
  let sharedStrings: string | undefined;
  const resolveTarget = (target: string): string => (target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  await readWhole(zip, rels, (p) =>
    p.on('opentag', (node) => {
      if (node.name !== 'Relationship') return;
      const id = String(node.attributes.Id ?? '');
      const target = resolveTarget(String(node.attributes.Target ?? ''));
      targets.set(id, target);
      if (String(node.attributes.Type ?? '').endsWith('/sharedStrings')) sharedStrings = target;
    }),
  );
  const sheets: SheetRef[] = [];
  await readWhole(zip, workbook, (p) =>
    p.on('opentag', (node) => {
      if (node.name !== 'sheet') return;
      const path = targets.get(String(node.attributes['r:id'] ?? ''));
      if (path && entries.has(path)) sheets.push({ name: String(node.attributes.name ?? ''), path });
    }),
  );
  if (sheets.length === 0) throw new WorkbookError('the workbook has no worksheet');
  return sharedStrings && entries.has(sharedStrings) ? { sheets, sharedStrings } : { sheets };
}

async function readSharedStrings(zip: ZipFile, entry: Entry): Promise<StringTable> {
  const table = new StringTable();
  let text: string[] | undefined;
  let inT = false;
  // Phonetic guides (<rPh>, Japanese readings) are not part of the cell's text.
  let inPhonetic = false;
  await readWhole(zip, entry, (p) => {
    p.on('opentag', (node) => {
      if (node.name === 'si') text = [];
      else if (node.name === 'rPh') inPhonetic = true;
      else if (node.name === 't' && !inPhonetic) inT = true;
    });
    p.on('text', (t) => {
      if (inT) text?.push(t);
    });
    p.on('closetag', (node) => {
      if (node.name === 't') inT = false;
      else if (node.name === 'rPh') inPhonetic = false;
      else if (node.name === 'si') {
        table.add(text ? text.join('') : '');
        text = undefined;
      }
    });
  });
  return table;
}

/** Column index (0-based) of a cell reference such as "AB12". */
function columnOf(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n - 1;
}

/**
 * A number cell's text as digits. Integers are kept as written (exponent forms such as
 * 4.915102000001E+12 are expanded exactly); other numbers as JavaScript prints them.
 */
export function numberText(v: string): string {
  const t = v.trim();
  if (/^-?\d+$/.test(t)) return t;
  const m = /^(-?)(\d+)(?:\.(\d+))?[eE]\+?(\d+)$/.exec(t);
  if (m) {
    const [, sign, int, frac = '', exp] = m;
    const shift = Number(exp);
    if (frac.length <= shift) return `${sign}${(int! + frac + '0'.repeat(shift - frac.length)).replace(/^0+(?=\d)/, '')}`;
  }
  const x = Number(t);
  return Number.isFinite(x) ? String(x) : t;
}

/** Names of the workbook's sheets, in order (for messages and tests). */
export async function listSheets(file: string): Promise<string[]> {
  const zip = await openZip(file);
  try {
    return (await readSheets(zip, await listEntries(zip))).sheets.map((s) => s.name);
  } finally {
    zip.close();
  }
}

/** Streams the rows of one sheet (default: the first) as records, a chunk at a time. */
export async function* readXlsxChunks(file: string, opts: { sheet?: string; onSheet?: (name: string) => void } = {}): AsyncGenerator<CsvRecord[]> {
  const zip = await openZip(file);
  try {
    const entries = await listEntries(zip);
    const { sheets, sharedStrings } = await readSheets(zip, entries);
    const sheet = opts.sheet === undefined ? sheets[0]! : (sheets.find((s) => s.name === opts.sheet) ?? sheets.find((s) => s.name.toLowerCase() === opts.sheet!.toLowerCase()));
    if (!sheet) throw new WorkbookError(`no sheet "${opts.sheet}" in the workbook (sheets: ${sheets.map((s) => `"${s.name}"`).join(', ')}): give one of them to --sheet`);
    opts.onSheet?.(sheet.name);
    const strings = sharedStrings ? await readSharedStrings(zip, entries.get(sharedStrings)!) : new StringTable();

    let out: CsvRecord[] = [];
    let fields: string[] = [];
    let numeric: number[] | undefined;
    let rowNumber = 0;
    let cellIndex = -1;
    let cellType = '';
    let text: string | undefined;
    let inValue = false;
    let inPhonetic = false;
    const setup = (p: SaxesParser): void => {
      p.on('opentag', (node) => {
        switch (node.name) {
          case 'row': {
            const r = Number(node.attributes.r);
            rowNumber = Number.isInteger(r) && r > 0 ? r : rowNumber + 1;
            fields = [];
            numeric = undefined;
            cellIndex = -1;
            break;
          }
          case 'c': {
            const ref = node.attributes.r;
            cellIndex = typeof ref === 'string' && ref !== '' ? columnOf(ref) : cellIndex + 1;
            cellType = String(node.attributes.t ?? 'n');
            text = undefined;
            break;
          }
          case 'v':
            inValue = true;
            break;
          case 't':
            if (!inPhonetic) inValue = true;
            break;
          case 'rPh':
            inPhonetic = true;
            break;
        }
      });
      p.on('text', (t) => {
        if (inValue) text = text === undefined ? t : text + t;
      });
      p.on('closetag', (node) => {
        switch (node.name) {
          case 'v':
          case 't':
            inValue = false;
            break;
          case 'rPh':
            inPhonetic = false;
            break;
          case 'c':
            if (text !== undefined && cellIndex >= 0) {
              while (fields.length < cellIndex) fields.push('');
              fields[cellIndex] = cellValue(cellType, text, strings);
              if (cellType === 'n') (numeric ??= []).push(cellIndex);
            }
            break;
          case 'row':
            if (fields.some((f) => f !== '')) out.push(numeric ? { line: rowNumber, fields, numeric } : { line: rowNumber, fields });
            fields = [];
            break;
        }
      });
    };
    for await (const _ of parsePart(zip, entries.get(sheet.path)!, setup)) {
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
  } finally {
    zip.close();
  }
}

function cellValue(type: string, text: string, strings: StringTable): string {
  switch (type) {
    case 's':
      return strings.get(Number(text)) ?? '';
    case 'n':
      return numberText(text);
    case 'b':
      return text === '1' ? 'TRUE' : 'FALSE';
    default:
      // inlineStr, str (a formula's text), d (ISO date), e (#N/A…): the text as written.
      return text;
  }
}

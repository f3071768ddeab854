import fs from 'node:fs';
import { IANAZone } from 'luxon';
import { readCsvChunks } from './csv.js';
import { normalisePhone } from './phone.js';

// Lead CSV (product.md 2.3): `phone_number` required; `timezone`, `country` and
// `secondary_phone_number_N` have meanings; every other column is a variable.
//
// Decisions:
// - Header names are matched after trimming and lower-casing; variables keep the
//   header's spelling (trimmed). `country` is also passed on as a variable.
// - A bad primary number or a bad `timezone` makes the row invalid (with its reason).
// - A bad secondary number does not: it is dropped and named in `warnings`, because the
//   primary contact is still worth calling. A secondary equal to the primary or to an
//   earlier secondary is dropped the same way.
// - Extra fields beyond the header are ignored; missing trailing fields are empty.

/** A valid lead row, normalised. */
export interface ParsedLead {
  /** E.164. */
  phoneNumber: string;
  /** E.164, in column order secondary_phone_number_1, _2, … */
  secondary: string[];
  timezone?: string;
  variables: Record<string, string>;
}

export type ReadLeadResult =
  | { ok: true; line: number; lead: ParsedLead; warnings?: string[] }
  | { ok: false; line: number; phoneText: string; reason: string; variables: Record<string, string> };

/** The lead file cannot be read as a lead file at all (missing, no header, no phone column). */
export class LeadFileError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'LeadFileError';
  }
}

/** Characters a row may hold (all fields together); larger rows are invalid leads. */
export const MAX_ROW_CHARS = 64 * 1024;

interface Columns {
  phone: number;
  timezone: number;
  country: number;
  /** Indexes of secondary_phone_number_N columns, ordered by N. */
  secondary: { index: number; name: string }[];
  /** Variable name and column index. */
  variables: { index: number; name: string }[];
}

/** Streams a lead CSV as validated rows; throws LeadFileError when the file itself is unusable. */
export async function* readLeadCsv(file: string, opts: { defaultCountry?: string; allowDuplicates?: boolean } = {}): AsyncGenerator<ReadLeadResult> {
  try {
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LeadFileError(file, code === 'ENOENT' ? 'no such lead file' : `cannot read the lead file (${code ?? String(err)})`);
  }
  let columns: Columns | undefined;
  // Zone checks build an Intl formatter (~80 µs); a file repeats a handful of zones.
  const zones = new Map<string, boolean>();
  const validZone = (tz: string): boolean => {
    let ok = zones.get(tz);
    if (ok === undefined) zones.set(tz, (ok = IANAZone.isValidZone(tz)));
    return ok;
  };
  for await (const records of readCsvChunks(file)) {
    for (const record of records) {
      if (!columns) {
        columns = headerColumns(file, record.fields);
        continue;
      }
      yield readRow(columns, record.line, record.fields, record.unterminated === true, opts.defaultCountry, validZone);
    }
  }
  if (!columns) throw new LeadFileError(file, 'the file is empty: a header row with a "phone_number" column is required');
}

function headerColumns(file: string, header: string[]): Columns {
  const names = header.map((h) => h.trim());
  const lower = names.map((h) => h.toLowerCase());
  const phone = lower.indexOf('phone_number');
  if (phone < 0) {
    // A binary or mis-separated file has one huge "header": show a readable prefix only.
    const found = names.filter((n) => n !== '').slice(0, 8).map(shown).join(', ');
    const separator = /[;\t|]/.exec(names.join(','))?.[0];
    const hint = separator ? ` — the header looks separated by ${separator === '\t' ? 'tabs' : `"${separator}"`}; save the file as comma-separated CSV` : '';
    if (/[\uFFFD\x00-\x08\x0E-\x1F]/.test(names.join(''))) {
      throw new LeadFileError(file, 'the header row is not readable text: a CSV file saved as UTF-8 with a "phone_number" column is required');
    }
    throw new LeadFileError(file, `no "phone_number" column in the header row (found: ${found || 'nothing'})${hint}`);
  }
  // Two columns of one name would silently drop one of them (or pick one of two phone numbers).
  const firstAt = new Map<string, number>();
  lower.forEach((name, index) => {
    if (name === '') return;
    const earlier = firstAt.get(name);
    if (earlier !== undefined) {
      throw new LeadFileError(file, `column "${shown(names[index] ?? name)}" appears twice in the header row (columns ${earlier + 1} and ${index + 1}): rename or remove one`);
    }
    firstAt.set(name, index);
  });
  const secondary: { index: number; name: string; n: number }[] = [];
  const variables: { index: number; name: string }[] = [];
  lower.forEach((name, index) => {
    const m = /^secondary_phone_number_(\d+)$/.exec(name);
    if (m) secondary.push({ index, name: names[index] ?? name, n: Number(m[1]) });
    else if (name !== 'phone_number' && name !== 'timezone' && name !== '') variables.push({ index, name: names[index] ?? name });
  });
  secondary.sort((a, b) => a.n - b.n);
  return {
    phone,
    timezone: lower.indexOf('timezone'),
    country: lower.indexOf('country'),
    secondary: secondary.map(({ index, name }) => ({ index, name })),
    variables,
  };
}

/** A header name as shown in an error: printable, at most 40 characters. */
function shown(name: string): string {
  const printable = name.replace(/[^\P{C}]/gu, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}

function readRow(
  columns: Columns,
  line: number,
  fields: string[],
  unterminated: boolean,
  defaultCountry: string | undefined,
  validZone: (tz: string) => boolean,
): ReadLeadResult {
  // A runaway row (a missing closing quote, a pasted blob) is kept as an invalid lead
  // without its content: megabytes of variables would be sent with every make_call.
  const size = fields.reduce((sum, f) => sum + f.length, 0);
  if (size > MAX_ROW_CHARS) {
    const text = (fields[columns.phone] ?? '').trim();
    const phoneText = text.length > 32 ? `${text.slice(0, 32)}…` : text;
    return { ok: false, line, phoneText, reason: `row too large (${size} characters; at most ${MAX_ROW_CHARS} per row)`, variables: {} };
  }
  const variables: Record<string, string> = {};
  for (const v of columns.variables) variables[v.name] = fields[v.index] ?? '';
  const phoneText = (fields[columns.phone] ?? '').trim();
  if (unterminated) return invalidRow(line, phoneText, 'unterminated quoted field (a " without its closing ")', variables);
  const countryText = columns.country >= 0 ? (fields[columns.country] ?? '').trim() : '';
  const country = countryText || defaultCountry;
  const primary = normalisePhone(phoneText, country);
  if (!primary.ok) return invalidRow(line, phoneText, primary.reason, variables);

  let timezone: string | undefined;
  if (columns.timezone >= 0) {
    const tz = (fields[columns.timezone] ?? '').trim();
    if (tz !== '') {
      if (!validZone(tz)) return invalidRow(line, phoneText, `unknown timezone "${tz}"`, variables);
      timezone = tz;
    }
  }

  const secondary: string[] = [];
  let warnings: string[] | undefined;
  for (const col of columns.secondary) {
    const text = (fields[col.index] ?? '').trim();
    if (text === '') continue;
    const result = normalisePhone(text, country);
    let problem: string | undefined;
    if (!result.ok) problem = result.reason;
    else if (result.e164 === primary.e164 || secondary.includes(result.e164)) problem = 'same number as an earlier contact';
    else secondary.push(result.e164);
    if (problem) (warnings ??= []).push(`${col.name} skipped: ${problem}`);
  }

  const lead: ParsedLead = { phoneNumber: primary.e164, secondary, variables };
  if (timezone) lead.timezone = timezone;
  return warnings ? { ok: true, line, lead, warnings } : { ok: true, line, lead };
}

function invalidRow(line: number, phoneText: string, reason: string, variables: Record<string, string>): ReadLeadResult {
  return { ok: false, line, phoneText, reason, variables };
}

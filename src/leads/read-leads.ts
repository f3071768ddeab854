import fs from 'node:fs';
import { IANAZone } from 'luxon';
import { ColumnError, planColumns, type ColumnChoice, type ColumnPlan, type LeadColumns } from './columns.js';
import type { CsvRecord } from './csv.js';
import { readTableChunks, TableFormatError, type TableFormat, type TableOptions } from './lead-table.js';
import { normaliseNumberCell, normalisePhone, type PhoneResult } from './phone.js';
import { WorkbookError } from './xlsx.js';

// Lead files (docs/design.md §2.3): a phone number column required; timezone, country and
// secondary numbers have meanings; every other column is a variable. Which header is
// which is decided in columns.ts (campaignd's names, a mapping, or recognised names).
//
// Decisions:
// - Variables keep the header's spelling (trimmed) unless the mapping renames them.
//   A column taken for a role (the country column too) is not a variable unless the
//   mapping names it as one.
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

/** `externalId`: the caller's own id of the lead (API items only; files have none). */
export type ReadLeadResult =
  | { ok: true; line: number; lead: ParsedLead; warnings?: string[]; externalId?: string }
  | { ok: false; line: number; phoneText: string; reason: string; variables: Record<string, string>; externalId?: string };

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

/** How the file was read and which column went where: the summary prints it. */
export interface LeadFileLayout {
  format: TableFormat;
  columns: ColumnChoice;
}

export interface ReadLeadOptions extends TableOptions {
  defaultCountry?: string;
  allowDuplicates?: boolean;
  /** The campaign's lead_columns, merged with --map by the caller. */
  columns?: LeadColumns;
  /** Where `columns` came from, for messages ("--map", "lead_columns in FILE"). */
  columnsSource?: string;
  /** Called once the header row is read, before the first row. */
  onLayout?: (layout: LeadFileLayout) => void;
}

/**
 * Streams a lead file (CSV in any usual delimiter and encoding, or .xlsx) as validated
 * rows; throws LeadFileError when the file itself is unusable.
 */
export async function* readLeadFile(file: string, opts: ReadLeadOptions = {}): AsyncGenerator<ReadLeadResult> {
  try {
    await fs.promises.access(file, fs.constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LeadFileError(file, code === 'ENOENT' ? 'no such lead file' : `cannot read the lead file (${code ?? String(err)})`);
  }
  let columns: ColumnPlan | undefined;
  let format: TableFormat | undefined;
  const validZone = zoneChecker();
  const table: TableOptions = {};
  if (opts.delimiter) table.delimiter = opts.delimiter;
  if (opts.encoding) table.encoding = opts.encoding;
  if (opts.sheet !== undefined) table.sheet = opts.sheet;
  try {
    for await (const records of readTableChunks(file, table, (f) => (format = f))) {
      for (const record of records) {
        if (!columns) {
          columns = planColumns(record.fields, opts.columns, opts.columnsSource);
          if (format) opts.onLayout?.({ format, columns: columns.choice });
          continue;
        }
        yield readRow(columns, record, opts.defaultCountry, validZone);
      }
    }
  } catch (err) {
    if (err instanceof ColumnError || err instanceof TableFormatError || err instanceof WorkbookError) throw new LeadFileError(file, err.message);
    throw err;
  }
  if (!columns) throw new LeadFileError(file, 'the file is empty: a header row with a phone number column is required');
}

/** The former name: every lead file reader goes through readLeadFile. */
export const readLeadCsv = readLeadFile;

function readRow(columns: ColumnPlan, record: CsvRecord, defaultCountry: string | undefined, validZone: (tz: string) => boolean): ReadLeadResult {
  const { line, fields } = record;
  const unterminated = record.unterminated === true;
  // A runaway row (a missing closing quote, a pasted blob) is kept as an invalid lead
  // without its content: megabytes of variables would be sent with every make_call.
  const size = fields.reduce((sum, f) => sum + f.length, 0);
  if (size > MAX_ROW_CHARS) return tooLarge(line, fields[columns.phone] ?? '', size, 'row');
  const variables: Record<string, string> = {};
  for (const v of columns.variables) variables[v.name] = fields[v.index] ?? '';
  const phoneText = (fields[columns.phone] ?? '').trim();
  if (unterminated) return invalidRow(line, phoneText, 'unterminated quoted field (a " without its closing ")', variables);
  if (record.problem) return invalidRow(line, phoneText, record.problem, variables);
  const countryText = columns.country >= 0 ? (fields[columns.country] ?? '').trim() : '';
  const numeric = record.numeric;
  return normaliseLead(
    {
      line,
      phone: { text: phoneText, numeric: numeric?.includes(columns.phone) === true },
      country: countryText || defaultCountry,
      timezone: columns.timezone >= 0 ? (fields[columns.timezone] ?? '').trim() : '',
      secondary: columns.secondary.map((col) => ({ name: col.name, text: (fields[col.index] ?? '').trim(), numeric: numeric?.includes(col.index) === true })),
      variables,
    },
    validZone,
  );
}

/** One lead's fields as its source gave them (a file's row, an API item), before any check. */
export interface LeadFields {
  /** The row's line in its file, or the item's position (1..) in a request. */
  line: number;
  /** `numeric`: an .xlsx number cell (its digits, read as such). */
  phone: { text: string; numeric?: boolean };
  /** The row's own country, else the campaign's default_country. */
  country: string | undefined;
  /** '' when not given. */
  timezone: string;
  /** In order; `name` (the column, or the item's field) names a skipped one in the warnings. */
  secondary: { name: string; text: string; numeric?: boolean }[];
  variables: Record<string, string>;
  /** The reason of a national number without any country, when the source names its fix otherwise than a file does. */
  noCountryReason?: string;
}

/**
 * The lead rules every source goes through (files and the API alike): the primary number
 * normalised to E.164 or the lead invalid with the reason; a bad timezone makes it invalid;
 * a bad or repeated secondary number is dropped with a warning.
 */
export function normaliseLead(fields: LeadFields, validZone: (tz: string) => boolean): ReadLeadResult {
  const { line, variables, country } = fields;
  const phoneText = fields.phone.text;
  const phoneOf = (text: string, numeric: boolean | undefined): PhoneResult => (numeric ? normaliseNumberCell(text, country) : normalisePhone(text, country));
  const primary = phoneOf(phoneText, fields.phone.numeric);
  if (!primary.ok) return invalidRow(line, phoneText, (primary.needsCountry && fields.noCountryReason) || primary.reason, variables);

  let timezone: string | undefined;
  const tz = fields.timezone;
  if (tz !== '') {
    if (!validZone(tz)) return invalidRow(line, phoneText, `unknown timezone "${tz}"`, variables);
    timezone = tz;
  }

  const secondary: string[] = [];
  let warnings: string[] | undefined;
  for (const col of fields.secondary) {
    const text = col.text;
    if (text === '') continue;
    const result = phoneOf(text, col.numeric);
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

/** A row or item over MAX_ROW_CHARS: an invalid lead without its content (its number cut short). */
export function tooLarge(line: number, phone: string, size: number, what: 'row' | 'item'): ReadLeadResult {
  const text = phone.trim();
  const phoneText = text.length > 32 ? `${text.slice(0, 32)}…` : text;
  return { ok: false, line, phoneText, reason: `${what} too large (${size} characters; at most ${MAX_ROW_CHARS} per ${what})`, variables: {} };
}

/** A memo of IANA zone checks: building the Intl formatter costs ~80 µs and a source repeats a handful of zones. */
export function zoneChecker(): (tz: string) => boolean {
  const zones = new Map<string, boolean>();
  return (tz) => {
    let ok = zones.get(tz);
    if (ok === undefined) zones.set(tz, (ok = IANAZone.isValidZone(tz)));
    return ok;
  };
}

function invalidRow(line: number, phoneText: string, reason: string, variables: Record<string, string>): ReadLeadResult {
  return { ok: false, line, phoneText, reason, variables };
}

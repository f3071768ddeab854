// RFC 4180 CSV: CRLF between records; a field holding a comma, a double quote, CR or LF
// is enclosed in double quotes with each quote doubled. Everything else goes as it is,
// so a field's text (any Unicode) survives a round trip.

const NEEDS_QUOTES = /[",\r\n]/;

/** One field, quoted only when it has to be. */
export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, with its CRLF. */
export function csvRecord(fields: readonly string[]): string {
  let out = '';
  for (let i = 0; i < fields.length; i++) {
    if (i > 0) out += ',';
    out += csvField(fields[i]!);
  }
  return `${out}\r\n`;
}

/** A value as a cell: text as is, numbers and booleans in JSON form, objects and lists as JSON, null and absent empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * The byte order mark CSV files start with: without it Excel reads a UTF-8 file in the
 * machine's legacy code page, and "Müller" or "José" arrive garbled; LibreOffice, Google
 * Sheets, Numbers and Python's csv (encoding="utf-8-sig") all read it as what it is.
 */
export const UTF8_BOM = '\uFEFF';

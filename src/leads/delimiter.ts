// Which character separates the fields: read from the header row, where the separator
// appears between every pair of column names and the names themselves rarely contain
// one. Comma, semicolon (Excel in most European locales), tab (Excel's "Unicode text")
// and pipe (database exports).

export const DELIMITERS = [',', ';', '\t', '|'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

/** `--delimiter` values: the character itself or its name. */
const NAMES: Record<string, Delimiter> = {
  ',': ',',
  comma: ',',
  ';': ';',
  semicolon: ';',
  '\t': '\t',
  '\\t': '\t',
  tab: '\t',
  '|': '|',
  pipe: '|',
};

export function parseDelimiter(text: string): Delimiter | undefined {
  return NAMES[text.toLowerCase()];
}

/** How a delimiter is named in messages. */
export function delimiterName(d: Delimiter): string {
  return d === '\t' ? 'tab' : d === ',' ? 'comma' : d === ';' ? 'semicolon' : 'pipe';
}

/**
 * The delimiter of a header line: the candidate that occurs most often outside quotes.
 * A header of one column has none; comma is assumed then (and on ties, in the order above).
 */
export function detectDelimiter(headerLine: string): Delimiter {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (DELIMITERS as readonly string[]).includes(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  let best: Delimiter = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    const c = counts.get(d) ?? 0;
    if (c > bestCount) {
      best = d;
      bestCount = c;
    }
  }
  return best;
}

/** The first line of a text (up to its first unquoted line end). */
export function firstLine(text: string): string {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) return text.slice(0, i);
  }
  return text;
}

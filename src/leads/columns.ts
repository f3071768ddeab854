// Which column of a lead file holds what. campaignd's own names (docs/design.md §2.3:
// phone_number, timezone, country, secondary_phone_number_N) always work; a mapping
// (`lead_columns` in the campaign file, `leads import --map`) names the file's own
// headers; without one, the names CRMs and spreadsheets commonly use are recognised,
// case- and accent-insensitively. Every other column is a variable passed to make_call.

/** A mapping as written: campaignd's field → the file's header. */
export interface LeadColumns {
  phone_number?: string;
  timezone?: string;
  country?: string;
  secondary_phone_numbers?: string[];
  /** Variable name → header. Columns not named here are still variables, under their header. */
  variables?: Record<string, string>;
}

/** How a column was chosen, for the summary. */
export type ChoiceHow = 'named' | 'mapped' | 'recognised';

/** Which header went to which field: what the import summary prints. */
export interface ColumnChoice {
  phone_number: { column: string; how: ChoiceHow };
  timezone?: { column: string; how: ChoiceHow };
  country?: { column: string; how: ChoiceHow };
  secondary_phone_numbers: string[];
  /** Variable name → header. */
  variables: Record<string, string>;
}

/** Column indexes for the row reader, plus what was chosen. */
export interface ColumnPlan {
  phone: number;
  timezone: number;
  country: number;
  secondary: { index: number; name: string }[];
  variables: { index: number; name: string }[];
  choice: ColumnChoice;
}

/** The header row cannot be used with this mapping; the message says what to write. */
export class ColumnError extends Error {}

/** A header compared without case, accents, spaces or punctuation: "Téléphone" → "telephone". */
export function headerKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

// Known names, compared by headerKey. English, German, French, Spanish, Italian, Dutch.
const PHONE_NAMES = new Set([
  'phonenumber', 'phone', 'phoneno', 'telephone', 'telephonenumber', 'tel', 'telno', 'telnr', 'telefon', 'telefonnummer', 'rufnummer',
  'mobile', 'mobilephone', 'mobilenumber', 'mobil', 'mobilnummer', 'handy', 'handynummer', 'cell', 'cellphone', 'cellular',
  'numero', 'numerodetelephone', 'portable', 'telefono', 'numerodetelefono', 'celular', 'movil', 'cellulare', 'telefoonnummer',
]);
const TIMEZONE_NAMES = new Set(['timezone', 'tz', 'zeitzone', 'zone', 'timezonename', 'fuseauhoraire', 'zonahoraria', 'fusoorario', 'tijdzone']);
const COUNTRY_NAMES = new Set(['country', 'countrycode', 'land', 'pays', 'pais', 'paese', 'nation']);
const SECONDARY = /^secondary_phone_number_(\d+)$/;

/** Parses `--map` values: `phone_number=Phone,timezone=TZ,secondary_phone_numbers=Mobile|Work,variables.first_name=Vorname`. */
export function parseMapOption(values: string[]): LeadColumns {
  const out: LeadColumns = {};
  for (const value of values) {
    for (const part of value.split(',')) {
      if (part.trim() === '') continue;
      const eq = part.indexOf('=');
      const key = (eq < 0 ? part : part.slice(0, eq)).trim();
      const column = eq < 0 ? '' : part.slice(eq + 1).trim();
      if (eq < 0 || column === '') throw new ColumnError(`--map "${part.trim()}" names no column: write FIELD=COLUMN, e.g. --map phone_number=Phone`);
      if (key === 'phone_number' || key === 'timezone' || key === 'country') out[key] = column;
      else if (key === 'secondary_phone_numbers') out.secondary_phone_numbers = column.split('|').map((c) => c.trim()).filter((c) => c !== '');
      else if (key.startsWith('variables.') && key.length > 'variables.'.length) (out.variables ??= {})[key.slice('variables.'.length)] = column;
      else throw new ColumnError(`--map: unknown field "${key}": use phone_number, timezone, country, secondary_phone_numbers (COLUMN|COLUMN…) or variables.NAME`);
    }
  }
  return out;
}

/** `over` (from --map) on top of `base` (the campaign's lead_columns): fields it names replace, variables merge. */
export function mergeColumns(base: LeadColumns | undefined, over: LeadColumns | undefined): LeadColumns | undefined {
  if (!base) return over;
  if (!over) return base;
  const merged: LeadColumns = { ...base, ...over };
  if (base.variables || over.variables) merged.variables = { ...base.variables, ...over.variables };
  return merged;
}

/** The mapping as `--map` text (for messages). */
export function mapText(m: LeadColumns): string {
  const parts: string[] = [];
  if (m.phone_number) parts.push(`phone_number=${m.phone_number}`);
  if (m.timezone) parts.push(`timezone=${m.timezone}`);
  if (m.country) parts.push(`country=${m.country}`);
  if (m.secondary_phone_numbers?.length) parts.push(`secondary_phone_numbers=${m.secondary_phone_numbers.join('|')}`);
  for (const [name, column] of Object.entries(m.variables ?? {})) parts.push(`variables.${name}=${column}`);
  return parts.join(',');
}

/** The same mapping as campaign-file YAML (for messages). */
function yamlText(m: LeadColumns): string {
  const parts: string[] = [];
  if (m.phone_number) parts.push(`phone_number: ${JSON.stringify(m.phone_number)}`);
  if (m.secondary_phone_numbers?.length) parts.push(`secondary_phone_numbers: [${m.secondary_phone_numbers.map((c) => JSON.stringify(c)).join(', ')}]`);
  return `lead_columns: { ${parts.join(', ')} }`;
}

/** A header as shown in messages: printable, at most 40 characters. */
export function shownHeader(name: string): string {
  const printable = name.replace(/[^\P{C}]/gu, '?');
  return printable.length > 40 ? `${printable.slice(0, 40)}…` : printable;
}

/**
 * Decides the columns of a header row. `source` names where the mapping came from
 * ("--map", "lead_columns in FILE") for messages.
 */
export function planColumns(header: string[], mapping?: LeadColumns, source = 'the mapping'): ColumnPlan {
  const names = header.map((h) => h.trim());
  const keys = names.map(headerKey);
  const found = (): string => {
    const list = names.filter((n) => n !== '');
    return list.length === 0 ? 'nothing' : list.slice(0, 12).map((n) => `"${shownHeader(n)}"`).join(', ') + (list.length > 12 ? ', …' : '');
  };
  // Two columns of one name would silently drop one of them (or pick one of two numbers).
  const firstAt = new Map<string, number>();
  names.forEach((name, index) => {
    const lower = name.toLowerCase();
    if (lower === '') return;
    const earlier = firstAt.get(lower);
    if (earlier !== undefined) throw new ColumnError(`column "${shownHeader(name)}" appears twice in the header row (columns ${earlier + 1} and ${index + 1}): rename or remove one`);
    firstAt.set(lower, index);
  });
  const locate = (column: string, field: string): number => {
    const exact = names.indexOf(column.trim());
    if (exact >= 0) return exact;
    const byKey = keys.indexOf(headerKey(column));
    if (byKey >= 0 && headerKey(column) !== '') return byKey;
    throw new ColumnError(`column "${column}" (${field} in ${source}) is not in the header row (found: ${found()})`);
  };
  const used = new Set<number>();
  const take = (index: number): number => {
    used.add(index);
    return index;
  };

  // The phone number: mapped, else campaignd's own name, else one recognised name.
  let phone: number;
  let phoneHow: ChoiceHow;
  if (mapping?.phone_number) {
    phone = take(locate(mapping.phone_number, 'phone_number'));
    phoneHow = 'mapped';
  } else if (names.some((n) => n.toLowerCase() === 'phone_number')) {
    phone = take(names.findIndex((n) => n.toLowerCase() === 'phone_number'));
    phoneHow = 'named';
  } else {
    const candidates = keys.flatMap((k, i) => (PHONE_NAMES.has(k) ? [i] : []));
    if (candidates.length > 1) {
      const [first, ...rest] = candidates.map((i) => names[i]!);
      const suggestion: LeadColumns = { phone_number: first!, secondary_phone_numbers: rest };
      throw new ColumnError(
        `several columns could hold the phone number: ${candidates.map((i) => `"${shownHeader(names[i]!)}"`).join(', ')}. ` +
          `Say which is the number to call and which are secondary contacts, e.g. --map "${mapText(suggestion)}", or in the campaign file ${yamlText(suggestion)}`,
      );
    }
    if (candidates.length === 0) {
      if (/[\uFFFD\x00-\x08\x0E-\x1F]/.test(names.join(''))) {
        throw new ColumnError('the header row is not readable text: save the lead file as CSV (UTF-8, UTF-16 or Windows-1252) or as .xlsx, or give --encoding');
      }
      const guess = names.find((n) => /num|tel|phone|fon|mobil|handy|cell/i.test(n)) ?? names.find((n) => n !== '') ?? 'COLUMN';
      throw new ColumnError(
        `no phone number column in the header row (found: ${found()}): name it, e.g. --map "phone_number=${guess}", or in the campaign file ${yamlText({ phone_number: guess })}`,
      );
    }
    phone = take(candidates[0]!);
    phoneHow = 'recognised';
  }

  const optional = (field: 'timezone' | 'country', known: Set<string>): { index: number; how?: ChoiceHow } => {
    const mapped = mapping?.[field];
    if (mapped) return { index: take(locate(mapped, field)), how: 'mapped' };
    const named = names.findIndex((n, i) => !used.has(i) && n.toLowerCase() === field);
    if (named >= 0) return { index: take(named), how: 'named' };
    const recognised = keys.findIndex((k, i) => !used.has(i) && known.has(k));
    return recognised >= 0 ? { index: take(recognised), how: 'recognised' } : { index: -1 };
  };
  const timezone = optional('timezone', TIMEZONE_NAMES);
  const country = optional('country', COUNTRY_NAMES);

  let secondary: { index: number; name: string }[];
  if (mapping?.secondary_phone_numbers) {
    secondary = mapping.secondary_phone_numbers.map((c) => {
      const index = take(locate(c, 'secondary_phone_numbers'));
      return { index, name: names[index]! };
    });
  } else {
    secondary = names
      .flatMap((n, index) => {
        const m = SECONDARY.exec(n.toLowerCase());
        return m && !used.has(index) ? [{ index, name: n, n: Number(m[1]) }] : [];
      })
      .sort((a, b) => a.n - b.n)
      .map(({ index, name }) => ({ index: take(index), name }));
  }

  // Variables: every column not taken above, under its header or the name the mapping
  // gives it. A column taken for a role (the country too) is a variable only when the
  // mapping names it as one (variables.country=Land), so that the summary's "Variables"
  // list is exactly what make_call receives.
  const variables: { index: number; name: string }[] = [];
  const renamed = new Map<number, string>();
  for (const [name, column] of Object.entries(mapping?.variables ?? {})) renamed.set(locate(column, `variables.${name}`), name);
  names.forEach((name, index) => {
    const mapped = renamed.get(index);
    if (name === '' || (used.has(index) && mapped === undefined)) return;
    variables.push({ index, name: mapped ?? name });
  });

  const choice: ColumnChoice = {
    phone_number: { column: names[phone]!, how: phoneHow },
    secondary_phone_numbers: secondary.map((s) => s.name),
    variables: Object.fromEntries(variables.map((v) => [v.name, names[v.index]!])),
  };
  if (timezone.how) choice.timezone = { column: names[timezone.index]!, how: timezone.how };
  if (country.how) choice.country = { column: names[country.index]!, how: country.how };
  return { phone, timezone: timezone.index, country: country.index, secondary, variables, choice };
}

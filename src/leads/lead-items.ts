import { MAX_ROW_CHARS, normaliseLead, tooLarge, zoneChecker, type ReadLeadResult } from './read-leads.js';

// Leads given as JSON items (the API's POST /campaigns/{name}/leads) read as the rows of a
// lead file are: the same normalisation and checks (read-leads.ts normaliseLead), then the
// same import (import.ts). An item's `line` is its position in the request, from 1.

/** One lead as the API takes it (its schema lives with the route; this is the shape it validated). */
export interface LeadItem {
  phone_number: string;
  external_id?: string;
  /** Passed to make_call as strings, as a file's columns are: numbers and booleans are written out. */
  variables?: Record<string, string | number | boolean>;
  secondary_phone_numbers?: string[];
  timezone?: string;
  /** ISO 3166 alpha-2, for a national number; else the campaign's default_country. */
  country?: string;
}

const NO_COUNTRY = 'national number without a country: add "country" to the item or default_country to the campaign';

/** The items as lead rows, in order. */
export function readLeadItems(items: readonly LeadItem[], defaultCountry?: string): ReadLeadResult[] {
  const validZone = zoneChecker();
  return items.map((item, i) => {
    const line = i + 1;
    const variables: Record<string, string> = {};
    let size = item.phone_number.length;
    for (const [name, value] of Object.entries(item.variables ?? {})) {
      const text = String(value);
      variables[name] = text;
      size += name.length + text.length;
    }
    for (const n of item.secondary_phone_numbers ?? []) size += n.length;
    // The result is this item's own, made just now: it takes the id in place (a copy of
    // each result was 5 % of a 10,000-item POST's time).
    const withId = (result: ReadLeadResult): ReadLeadResult => {
      if (item.external_id !== undefined) result.externalId = item.external_id;
      return result;
    };
    if (size > MAX_ROW_CHARS) return withId(tooLarge(line, item.phone_number, size, 'item'));
    const country = item.country?.trim() || defaultCountry;
    return withId(
      normaliseLead(
        {
          line,
          phone: { text: item.phone_number.trim() },
          country,
          timezone: item.timezone?.trim() ?? '',
          secondary: (item.secondary_phone_numbers ?? []).map((text, n) => ({ name: `secondary_phone_numbers[${n}]`, text: text.trim() })),
          variables,
          noCountryReason: NO_COUNTRY,
        },
        validZone,
      ),
    );
  });
}

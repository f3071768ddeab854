import type { Kysely } from 'kysely';
import { commandNumberReader } from '../leads/typed-number.js';
import type { PhoneResult } from '../leads/phone.js';
import type { Database } from '../store/types.js';
import { ApiProblem } from './problem.js';

// Numbers a client types (a path segment, a suppression to add) are read as the commands
// read them: `+` numbers as they are, national ones in `country` when the request names
// one, else in the campaigns' default_country. The reasons name the request's `country`
// parameter, the fix that works here, where the commands' name `--country`.

export type ApiNumberReader = (text: string) => PhoneResult;

export async function apiNumberReader(db: Kysely<Database>, country: string | undefined): Promise<ApiNumberReader> {
  const read = await commandNumberReader(db, country);
  return (text) => {
    const r = read(text);
    return r.ok ? r : { ...r, reason: r.reason.replace(/--country CC/g, 'country=CC').replace(/--country/g, 'country') };
  };
}

/** A number from the path: its E.164 form, or 400 naming the parameter. */
export async function pathNumber(db: Kysely<Database>, text: string, country: string | undefined): Promise<string> {
  const r = (await apiNumberReader(db, country))(text);
  if (r.ok) return r.e164;
  throw new ApiProblem(400, 'Invalid phone number', `"${text.slice(0, 40)}" is not a phone number campaignd can read: ${r.reason}`, [{ pointer: '/path/phone_number', message: r.reason }]);
}

/** `?country=` and the `country` field: an ISO 3166 alpha-2 code. */
export const COUNTRY_PATTERN = /^[A-Za-z]{2}$/;

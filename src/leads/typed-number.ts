import type { Kysely } from 'kysely';
import { isAssignedNumber, normalisePhone, type PhoneResult } from './phone.js';
import { campaignDefaultCountries } from '../store/campaigns.js';
import type { Database } from '../store/types.js';

// Phone numbers typed by a person for a command (`explain`, `suppress`) or sent to the API
// (its suppressions and explain, which say `country` where these reasons say `--country`):
// `+` numbers as they are; a
// national number in the country `--country` names, else in the default_country of the
// campaigns in the store, which is how their leads' numbers were read. Campaigns of
// several countries: each is tried; of different readings, the one in an assigned range
// wins, and a number still read as several is refused with the `--country` that picks
// each. Reasons name `--country`, the fix that works on the command line (a lead file's
// hint names its own).

/** Reads one typed number; never throws. */
export type NumberReader = (text: string) => PhoneResult;

/** The reader for a command: `--country` when given, else the campaigns' countries from the store. */
export async function commandNumberReader(db: Kysely<Database>, country: string | undefined): Promise<NumberReader> {
  const countries = country === undefined ? await campaignDefaultCountries(db) : [];
  return (text) => readTypedNumber(text, country, countries);
}

/** One typed number: `country` (from --country) wins; else each of `campaignCountries` is tried. */
export function readTypedNumber(text: string, country: string | undefined, campaignCountries: readonly string[]): PhoneResult {
  if (country !== undefined) return normalisePhone(text, country);
  const plain = normalisePhone(text);
  if (plain.ok || !plain.needsCountry) return plain;
  if (campaignCountries.length === 0) {
    return { ok: false, reason: 'national number and no campaign in the store has a default_country: pass --country CC (e.g. --country US) or write it with + and the country code' };
  }
  const readings = new Map<string, string[]>();
  const failures: string[] = [];
  for (const c of campaignCountries) {
    const r = normalisePhone(text, c);
    if (r.ok) readings.set(r.e164, [...(readings.get(r.e164) ?? []), c]);
    else failures.push(r.reason);
  }
  // Of several readings, one in an assigned range is the number meant (030 1234567 is
  // Berlin, not a US number of area code 030, which length alone allows).
  const assigned = [...readings.keys()].filter(isAssignedNumber);
  if (readings.size > 1 && assigned.length === 1) return { ok: true, e164: assigned[0]! };
  const [only, ...others] = [...readings.keys()];
  if (only !== undefined && others.length === 0) return { ok: true, e164: only };
  const where = `the campaigns' default_country ${campaignCountries.join(', ')}`;
  if (only !== undefined) {
    const choices = [...readings].map(([e164, cs]) => `${e164} (--country ${cs[0]})`).join(', ');
    return { ok: false, reason: `national number that reads differently in ${where}: ${choices}; pass --country to say which` };
  }
  const reasons = [...new Set(failures)].join('; ');
  return { ok: false, reason: `${reasons} (read in ${where}): pass --country CC for another country, or write it with + and the country code` };
}

// Public holidays of a region by its own calendar, from the maintained date-holidays
// library (never a hand-written list). Memoised per region and year: building a
// calendar costs ~30 ms, and holidays of a year never change within a run.
import Holidays from 'date-holidays';

const cache = new Map<string, readonly string[]>();
const MAX_ENTRIES = 2_000;

/** `YYYY-MM-DD` local dates of the region's public holidays in `year` (`US-TX` → Texas's, `US` → federal). */
export function publicHolidays(region: string, year: number): readonly string[] {
  const key = `${region}:${year}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const [country, state] = region.split('-') as [string, string | undefined];
  const hd = state ? new Holidays(country, state) : new Holidays(country);
  // Only `public` days: bank, school, optional and observance days are not days off for everyone.
  const dates = (hd.getHolidays(year) || []).filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10));
  const result = Object.freeze([...new Set(dates)].sort());
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(key, result);
  return result;
}

/** Whether date-holidays knows the region (country, or country-state), for config checks. */
export function holidayCalendarKnown(region: string): boolean {
  const [country, state] = region.split('-') as [string, string | undefined];
  const hd = new Holidays();
  const countries = hd.getCountries() as Record<string, string> | undefined;
  if (!countries?.[country]) return false;
  if (!state) return true;
  const states = hd.getStates(country) as Record<string, string> | undefined;
  return !!states?.[state];
}

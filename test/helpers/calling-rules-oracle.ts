// An oracle for calling rules (docs/design.md §11), independent of src/rules and src/time: the
// wall-clock fields of an instant, read with luxon in every zone a person may be in, and
// the public holidays of date-holidays' calendars. Numbers and zones are written by hand.
import Holidays from 'date-holidays';
import { DateTime } from 'luxon';
import type { RegionRule } from '../../src/rules/types.js';

export interface Person {
  phone: string;
  zones: string[];
  regions: string[];
}

/** Numbers and where their owners may be, from the area codes, in every US zone and beyond. */
export const PEOPLE: Person[] = [
  { phone: '+12125550100', zones: ['America/New_York'], regions: ['US'] },
  { phone: '+13055550100', zones: ['America/New_York'], regions: ['US', 'US-FL'] },
  { phone: '+14105550100', zones: ['America/New_York'], regions: ['US', 'US-MD'] },
  { phone: '+15125550100', zones: ['America/Chicago'], regions: ['US', 'US-TX'] },
  { phone: '+15045550100', zones: ['America/Chicago'], regions: ['US', 'US-LA'] },
  { phone: '+12055550100', zones: ['America/Chicago'], regions: ['US', 'US-AL'] },
  { phone: '+16015550100', zones: ['America/Chicago'], regions: ['US', 'US-MS'] },
  { phone: '+14055550100', zones: ['America/Chicago'], regions: ['US', 'US-OK'] },
  { phone: '+13035550100', zones: ['America/Denver'], regions: ['US'] },
  { phone: '+16025550100', zones: ['America/Phoenix'], regions: ['US'] },
  { phone: '+12135550100', zones: ['America/Los_Angeles'], regions: ['US'] },
  { phone: '+12082001234', zones: ['America/Boise', 'America/Los_Angeles'], regions: ['US'] },
  { phone: '+19075550100', zones: ['America/Adak', 'America/Anchorage'], regions: ['US'] },
  { phone: '+18085550100', zones: ['Pacific/Honolulu'], regions: ['US'] },
  { phone: '+17875550100', zones: ['America/Puerto_Rico'], regions: ['PR'] },
];

const holidayMemo = new Map<string, Set<string>>();
function holidaySet(region: string, year: number): Set<string> {
  const key = `${region}${year}`;
  let set = holidayMemo.get(key);
  if (!set) {
    const [c, s] = region.split('-') as [string, string | undefined];
    set = new Set((new Holidays(c, s ?? '').getHolidays(year) || []).filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10)));
    holidayMemo.set(key, set);
  }
  return set;
}

/** Whether the rules allow calling `p` at instant `t`, read from wall-clock fields in every zone. */
export function oracleOpen(rules: readonly RegionRule[], p: Person, t: number): boolean {
  for (const zone of p.zones) {
    const local = DateTime.fromMillis(t, { zone });
    const sec = local.hour * 3600 + local.minute * 60 + local.second;
    const date = local.toISODate()!;
    for (const r of rules) {
      if (!p.regions.includes(r.region)) continue;
      if (r.closedDates.includes(date)) return false;
      if (r.holidays && holidaySet(r.region, local.year).has(date)) return false;
      if (!r.hours) continue;
      const h = r.hours[local.weekday - 1];
      if (!h || sec < h.start || sec >= h.end) return false;
    }
  }
  return true;
}

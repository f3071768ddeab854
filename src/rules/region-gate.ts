// A regional rule as a gate in one zone. Its hours differ by weekday (Texas: 9–21, Sunday
// 12–21), so it is the UNION of one calling window per weekday, each open only on its own
// day: exactly one of them can be open at an instant. Each is a WindowSpec judged by
// time/window.ts, so the rule follows the same DST policy (wall-clock fields of the
// instant, never constructed local times). Closed dates and public holidays are those
// windows' blackout dates.
import type { Weekday } from '../time/window.js';
import { isOpen, nextOpening, type WindowSpec } from '../time/window.js';
import type { Gate } from './gate.js';
import { publicHolidays } from './holidays.js';
import type { RegionRule } from './types.js';

/** The rule, read in `zone` (one of the zones the number may be in). */
export function regionRuleGate(rule: RegionRule, zone: string): Gate {
  // Windows per UTC year of the instant asked about: they carry holidays of that year
  // and the next two, enough for any 400-day search from it.
  const byYear = new Map<number, WindowSpec[]>();
  const specsFor = (at: number): WindowSpec[] => {
    const year = new Date(at).getUTCFullYear();
    let specs = byYear.get(year);
    if (!specs) {
      specs = buildSpecs(rule, zone, year);
      if (byYear.size > 8) byYear.clear();
      byYear.set(year, specs);
    }
    return specs;
  };
  const label = `calling rule ${rule.region}${rule.source ? ` (${rule.source})` : ''} in ${zone}`;
  return {
    label,
    isOpen(at) {
      for (const s of specsFor(at)) if (isOpen(s, at)) return true;
      return false;
    },
    nextOpening(from) {
      let best: number | null = null;
      for (const s of specsFor(from)) {
        const n = nextOpening(s, from);
        if (n !== null && (best === null || n < best)) best = n;
      }
      return best;
    },
  };
}

function buildSpecs(rule: RegionRule, zone: string, year: number): WindowSpec[] {
  const blackout = new Set(rule.closedDates);
  if (rule.holidays) for (let y = year - 1; y <= year + 2; y++) for (const d of publicHolidays(rule.region, y)) blackout.add(d);
  const blackoutDates = [...blackout].sort();
  const specs: WindowSpec[] = [];
  for (let i = 0; i < 7; i++) {
    // No hours given: the whole day (only closed days and holidays narrow the window).
    const hours = rule.hours ? rule.hours[i] : { start: 0, end: 0 };
    if (hours === null || hours === undefined) continue;
    specs.push({ timezone: zone, days: [(i + 1) as Weekday], start: hours.start, end: hours.end, blackoutDates });
  }
  return specs;
}

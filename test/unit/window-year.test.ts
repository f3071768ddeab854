// A whole year, minute by minute, in six zones chosen for their daylight-saving quirks:
// isOpen is cross-checked against nextOpening and nextClosing at every minute, and against
// an independent oracle built on luxon's own DateTime fields at every minute of each
// daylight-saving change day (and the day after, where a window past midnight ends) and at
// every 61st minute of the rest of the year.

import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { Weekday } from '../../src/config/types.js';
import { isOpen, nextClosing, nextOpening, type WindowSpec } from '../../src/time/window.js';
import { offsetChanges } from '../integration/time-fixture.js';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'America/Santiago',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'Pacific/Kiritimati',
];
/** Offset changes in 2026: two in each zone with daylight saving, none in the other two. */
const CHANGES: Record<string, number> = {
  'Europe/Berlin': 2,
  'America/New_York': 2,
  'America/Santiago': 2,
  'Australia/Lord_Howe': 2,
  'Asia/Kathmandu': 0,
  'Pacific/Kiritimati': 0,
};

const h = (hh: number, mm = 0): number => hh * 3600 + mm * 60;
const ALL: Weekday[] = [1, 2, 3, 4, 5, 6, 7];
// Dates of daylight-saving changes in the zones above, and ordinary ones.
const BLACKOUTS = [
  '2026-01-01', '2026-03-08', '2026-03-29', '2026-04-04', '2026-04-05', '2026-09-05',
  '2026-09-06', '2026-10-03', '2026-10-04', '2026-10-25', '2026-11-01', '2026-12-24', '2026-12-25',
];

const WINDOWS: { label: string; w: Omit<WindowSpec, 'timezone'> }[] = [
  { label: 'inside a day, weekdays', w: { days: [1, 2, 3, 4, 5], start: h(9), end: h(18) } },
  { label: 'past midnight, Fri+Sat only', w: { days: [5, 6], start: h(22), end: h(2) } },
  { label: 'whole day (start = end), Tue+Sat, blackouts', w: { days: [2, 6], start: h(13), end: h(13), blackoutDates: BLACKOUTS } },
  { label: '02:30–05:00 (start in a European/US gap)', w: { days: ALL, start: h(2, 30), end: h(5) } },
  { label: '00:30–03:00 with blackouts (Santiago gap)', w: { days: ALL, start: h(0, 30), end: h(3), blackoutDates: BLACKOUTS } },
  { label: 'past midnight 23:30–02:15, Mon–Sat, blackouts', w: { days: [1, 2, 3, 4, 5, 6], start: h(23, 30), end: h(2, 15), blackoutDates: BLACKOUTS } },
  { label: '02:00–02:30 (Lord Howe gap, repeated hours)', w: { days: ALL, start: h(2), end: h(2, 30) } },
];

const FROM = Date.UTC(2025, 11, 31);
const TO = Date.UTC(2027, 0, 2);
/** Away from the change days the oracle is consulted at every ORACLE_STEP-th minute (61: every minute of the hour recurs). */
const ORACLE_STEP = 61;

/**
 * Minute indexes (from FROM) of every minute of each local day on which `zone` changes its
 * offset, and of the local day after: from local midnight of the change day to local
 * midnight two days later.
 */
function changeDayMinutes(zone: string): { days: string[]; minutes: Set<number> } {
  const days: string[] = [];
  const minutes = new Set<number>();
  for (const change of offsetChanges(zone, 2026)) {
    const day = DateTime.fromMillis(change.at, { zone }).startOf('day');
    days.push(day.toISODate() ?? '');
    const from = day.toMillis();
    const to = day.plus({ days: 2 }).toMillis();
    for (let t = from; t < to; t += 60_000) minutes.add((t - FROM) / 60_000);
  }
  return { days, minutes };
}

/** Wall-clock facts of one instant as luxon's DateTime reports them. */
interface Fields {
  s: number;
  weekday: number;
  date: string;
  prevWeekday: number;
  prevDate: string;
}

/** luxon's fields at every minute of the change days and every ORACLE_STEP-th minute of the rest of the year in `zone` (shared by its windows). */
function oracleFields(zone: string): Map<number, Fields> {
  const out = new Map<number, Fields>();
  const { minutes } = changeDayMinutes(zone);
  for (let i = 0, t = FROM; t < TO; i++, t += 60_000) {
    if (i % ORACLE_STEP !== 0 && !minutes.has(i)) continue;
    const dt = DateTime.fromMillis(t, { zone });
    const date = DateTime.fromObject({ year: dt.year, month: dt.month, day: dt.day }, { zone: 'UTC' });
    const prev = date.minus({ days: 1 });
    out.set(i, {
      s: dt.hour * 3600 + dt.minute * 60 + dt.second,
      weekday: date.weekday,
      date: date.toISODate() ?? '',
      prevWeekday: prev.weekday,
      prevDate: prev.toISODate() ?? '',
    });
  }
  return out;
}

/** The rule of docs/design.md §3.1, written the obvious way on luxon's fields. */
function oracleOpen(w: WindowSpec, f: Fields): boolean {
  const allowed = (weekday: number, date: string): boolean =>
    w.days.includes(weekday as Weekday) && !(w.blackoutDates ?? []).includes(date);
  if (w.start === w.end) return allowed(f.weekday, f.date);
  if (w.start < w.end) return f.s >= w.start && f.s < w.end && allowed(f.weekday, f.date);
  if (f.s >= w.start) return allowed(f.weekday, f.date);
  return f.s < w.end && allowed(f.prevWeekday, f.prevDate);
}

interface Report {
  failures: string[];
  openMinutes: number;
  openings: number;
}

/** Walks one year minute by minute; collects disagreements instead of asserting per minute. */
function checkYear(w: WindowSpec, oracle: Map<number, Fields>): Report {
  const failures: string[] = [];
  const fail = (msg: string, t: number): void => {
    if (failures.length < 10) failures.push(`${msg} at ${new Date(t).toISOString()}`);
  };
  let opensAt = -Infinity; // nextOpening answer for the current closed run
  let closesAt = -Infinity; // nextClosing answer for the current open run
  let openMinutes = 0;
  let openings = 0;
  let i = 0;
  for (let t = FROM; t < TO; t += 60_000, i++) {
    const open = isOpen(w, t);
    const f = oracle.get(i);
    if (f && open !== oracleOpen(w, f)) fail(`isOpen=${open} disagrees with the oracle`, t);
    if (open) {
      openMinutes++;
      if (t < opensAt) fail(`open before nextOpening=${new Date(opensAt).toISOString()}`, t);
      if (i % 7 === 0 && nextOpening(w, t) !== t) fail('nextOpening(t) !== t while open', t);
      if (t >= closesAt) {
        const c = nextClosing(w, t);
        if (c === null || c <= t) { fail(`nextClosing=${c}`, t); continue; }
        if (!isOpen(w, c - 1) || isOpen(w, c)) fail(`isOpen does not change at nextClosing ${new Date(c).toISOString()}`, t);
        closesAt = c;
      }
    } else {
      if (t < closesAt) fail(`closed before nextClosing=${new Date(closesAt).toISOString()}`, t);
      if (i % 7 === 0 && nextClosing(w, t) !== t) fail('nextClosing(t) !== t while closed', t);
      if (t >= opensAt) {
        const o = nextOpening(w, t);
        if (o === null || o <= t) { fail(`nextOpening=${o}`, t); continue; }
        // Closed just before the answer (and a minute before it), open at it.
        if (isOpen(w, o - 1) || (o - 60_000 >= t && isOpen(w, o - 60_000)) || !isOpen(w, o)) {
          fail(`isOpen does not change at nextOpening ${new Date(o).toISOString()}`, t);
        }
        opensAt = o;
        openings++;
      } else if (i % 97 === 0 && nextOpening(w, t) !== opensAt) {
        fail('nextOpening moved inside a closed run', t);
      }
    }
  }
  return { failures, openMinutes, openings };
}

describe.each(ZONES)('a year minute by minute in %s', (zone) => {
  let oracle: Map<number, Fields> | undefined;
  it('asks the oracle about every minute of each daylight-saving change day', () => {
    oracle ??= oracleFields(zone);
    const { days, minutes } = changeDayMinutes(zone);
    expect(days).toHaveLength(CHANGES[zone]!);
    // Two local days per change: 48 h, ± the hour (or half hour) the change adds or takes.
    expect(minutes.size).toBeGreaterThanOrEqual(days.length * (48 * 60 - 60));
    const missing = [...minutes].filter((i) => !oracle!.has(i));
    expect(missing).toEqual([]);
  });
  it.each(WINDOWS)('$label', ({ w }) => {
    oracle ??= oracleFields(zone);
    const spec: WindowSpec = { timezone: zone, ...w };
    const r = checkYear(spec, oracle);
    expect(r.failures).toEqual([]);
    // The walk must actually have seen both states many times.
    expect(r.openings).toBeGreaterThan(40);
    expect(r.openMinutes).toBeGreaterThan(1000);
  });
});

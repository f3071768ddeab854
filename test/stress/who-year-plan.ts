// The judging side of the year of calling rules (who-year.test.ts): who is called, which
// days run minute by minute, when each person may be called (the oracle of
// calling-rules-oracle.ts, never src/rules), and the checks of caps and openings read
// from the simulator's own call records.
import Holidays from 'date-holidays';
import { DateTime } from 'luxon';
import type { AttemptCap, RegionRule } from '../../src/rules/types.js';
import type { SimCall } from '../../src/simulator/types.js';
import { oracleOpen, PEOPLE, type Person } from '../helpers/calling-rules-oracle.js';
import { offsetChanges } from '../integration/time-fixture.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The person who opts out mid-year (New York, federal hours only): a number of its own, so PEOPLE stay in play all year. */
export const OPT_OUT_PERSON: Person = { phone: '+12125550101', zones: ['America/New_York'], regions: ['US'] };
export const YEAR_PEOPLE: Person[] = [...PEOPLE, OPT_OUT_PERSON];

export interface Span {
  from: number;
  to: number;
  /** Why it runs minute by minute: a DST change or the holiday of a rules region. */
  why: string;
}

/**
 * The stretches run minute by minute (never jumped over): each local day of a US DST
 * change, from its midnight in New York to its midnight on Adak, and each public holiday of
 * a region whose rule closes on holidays, over that day in the zones of its people; merged
 * where they touch.
 */
export function transitionSpans(rules: readonly RegionRule[], people: readonly Person[], year: number): Span[] {
  const localDay = (day: string, zones: readonly string[], why: string): Span => ({
    from: Math.min(...zones.map((zone) => DateTime.fromISO(day, { zone }).toMillis())),
    to: Math.max(...zones.map((zone) => DateTime.fromISO(day, { zone }).plus({ days: 1 }).toMillis())),
    why: `${day} ${why}`,
  });
  const spans: Span[] = [];
  for (const change of offsetChanges('America/New_York', year)) {
    spans.push(localDay(DateTime.fromMillis(change.at, { zone: 'America/New_York' }).toISODate()!, ['America/New_York', 'America/Adak'], 'DST change'));
  }
  for (const r of rules) {
    const zones = [...new Set(people.filter((p) => p.regions.includes(r.region)).flatMap((p) => p.zones))];
    if (!r.holidays || zones.length === 0) continue;
    const [country, state] = r.region.split('-') as [string, string | undefined];
    for (const h of new Holidays(country, state ?? '').getHolidays(year) || []) {
      if (h.type === 'public') spans.push(localDay(h.date.slice(0, 10), zones, `${r.region} ${h.name}`));
    }
  }
  spans.sort((a, b) => a.from - b.from);
  const merged: Span[] = [];
  for (const s of spans) {
    const last = merged.at(-1);
    if (last && s.from <= last.to) {
      last.to = Math.max(last.to, s.to);
      if (!last.why.includes(s.why)) last.why += `; ${s.why}`;
    } else merged.push({ ...s });
  }
  return merged;
}

/** The stretches of [from, to) in which the oracle lets `p` be called. */
export interface OpenInterval {
  from: number;
  to: number;
  /** Read minute by minute (inside a transition span), else every hour. */
  fine: boolean;
}

/**
 * When `p` may be called over [from, to): the oracle read every minute inside the spans
 * and every hour elsewhere (every US zone's offset and every rule's hour are whole hours,
 * so an edge outside the spans falls on a whole hour; the calls themselves are judged at
 * their exact instant, not from these).
 */
export function openIntervals(rules: readonly RegionRule[], p: Person, from: number, to: number, spans: readonly Span[]): OpenInterval[] {
  const out: OpenInterval[] = [];
  let open: OpenInterval | null = null;
  let t = from;
  let spanIndex = 0;
  while (t < to) {
    while (spanIndex < spans.length && spans[spanIndex]!.to <= t) spanIndex++;
    const span = spans[spanIndex];
    const fine = span !== undefined && span.from <= t;
    const isOpen = oracleOpen(rules, p, t);
    if (isOpen && !open) open = { from: t, to: t, fine };
    if (!isOpen && open) {
      open.to = t;
      out.push(open);
      open = null;
    }
    if (open && fine) open.fine = true;
    // A coarse step never crosses into a span: it stops at the span's start.
    t = fine ? t + MINUTE : Math.min(t + HOUR, span?.from ?? Number.POSITIVE_INFINITY);
  }
  if (open) out.push({ ...open, to });
  return out;
}

/** Every cap on calls to `p`: the daemon's, and those of the rules of its regions. */
export function capsOf(rules: readonly RegionRule[], p: Person, daemonCaps: readonly AttemptCap[]): AttemptCap[] {
  const own = rules
    .filter((r) => r.maxAttemptsPerNumber && p.regions.includes(r.region))
    .map((r) => ({ ...r.maxAttemptsPerNumber!, origin: `rules ${r.region}` }));
  return [...daemonCaps, ...own];
}

/** Throws at the first call that made a cap's rolling window hold more than its count (calls of one number, by creation). */
export function assertCapsKept(phone: string, calls: readonly SimCall[], caps: readonly AttemptCap[]): void {
  const times = calls.map((c) => c.createdAt).sort((a, b) => a - b);
  for (const cap of caps) {
    const windowMs = cap.windowHours * HOUR;
    let first = 0;
    for (let i = 0; i < times.length; i++) {
      while (times[first]! <= times[i]! - windowMs) first++;
      const n = i - first + 1;
      if (n > cap.count) {
        const listed = times.slice(first, i + 1).map((t) => new Date(t).toISOString());
        throw new Error(`${phone}: ${n} calls within ${cap.windowHours} h (${cap.origin}: at most ${cap.count}): ${listed.join(', ')}`);
      }
    }
  }
}

/**
 * The earliest instant from `t` at which no cap can have released `phone` yet, judged from
 * the calls created by `t`: the engine counts a call until its answer or end leaves the
 * window, never less than its creation.
 */
export function capHeldAtLeastUntil(calls: readonly SimCall[], caps: readonly AttemptCap[], t: number): number {
  let until = t;
  const created = calls
    .filter((c) => c.createdAt <= t)
    .map((c) => c.createdAt)
    .sort((a, b) => b - a);
  for (const cap of caps) {
    const windowMs = cap.windowHours * HOUR;
    const inside = created.filter((at) => at > t - windowMs);
    if (inside.length >= cap.count) until = Math.max(until, inside[cap.count - 1]! + windowMs);
  }
  return until;
}

/** The first opening after `t` (null beyond the intervals read). */
export function nextOpeningAfter(intervals: readonly OpenInterval[], t: number): number | null {
  return intervals.find((iv) => iv.from > t)?.from ?? null;
}

/** Every open interval of at least `minMs` and whether a call came in it (the year was used), with the first call's delay. */
export interface IntervalUse {
  phone: string;
  interval: OpenInterval;
  /** Simulated ms from the opening (or a cap's release, if later) to the first call; null: none. */
  delay: number | null;
}

/**
 * For every interval of at least `minMs` in which a cap's hold (from the calls before it)
 * ends early enough to leave `minMs`: whether and when it was first called.
 */
export function intervalUse(p: Person, intervals: readonly OpenInterval[], calls: readonly SimCall[], caps: readonly AttemptCap[], minMs: number): IntervalUse[] {
  const out: IntervalUse[] = [];
  for (const interval of intervals) {
    if (interval.to - interval.from < minMs) continue;
    // The hold measured from call ends (later than the engine's lower bound by the ring time).
    const ends = calls.filter((c) => c.createdAt < interval.from).map((c) => ({ ...c, createdAt: c.finishedAt ?? c.createdAt }));
    const allowedFrom = capHeldAtLeastUntil(ends, caps, interval.from);
    if (allowedFrom > interval.to - minMs) continue;
    const first = calls.find((c) => c.createdAt >= interval.from && c.createdAt < interval.to);
    out.push({ phone: p.phone, interval, delay: first ? first.createdAt - allowedFrom : null });
  }
  return out;
}

/** The wall clock of `t` in each zone of `p`, for messages. */
export function localTimes(p: Person, t: number): string {
  return p.zones.map((z) => DateTime.fromMillis(t, { zone: z }).toISO()).join(' / ');
}

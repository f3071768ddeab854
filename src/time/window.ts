// Calling windows (rule 1, docs/design.md §3.1) as pure functions of (window, instant).
//
// Daylight-saving policy — every rule below follows from one principle: an instant is
// judged by the wall-clock FIELDS it shows in the window's zone (local date, weekday,
// time of day), never by constructing local times, which may not exist or may exist twice.
//
//  - Open iff the local date is an allowed weekday, is not a blackout date, and the local
//    time of day is in [start, end).
//  - end < start: the window runs past midnight and belongs to the day it starts on. Before
//    `end` on local date D it is open iff D−1 is allowed and not blacked out; from `start`
//    on it is open iff D is. (Fri 22:00–02:00 with Saturday not allowed is open Sat 01:00.)
//  - end = start: the whole local calendar day is open.
//  - Spring forward (a gap): local times in the gap never occur. A start inside the gap
//    opens at the first instant after the gap (its fields are already past the start);
//    an end inside the gap closes at that same instant.
//  - Fall back (a repeated hour): both occurrences are judged by their fields. A window
//    covering 02:30 is open during both 02:30s; one ending at 02:30 closes at the first
//    02:30 and is open again for the repeated 02:00–02:30, because those fields are inside.
//  - Zones whose change happens at midnight (America/Santiago) follow the same rules: a
//    skipped 00:00–01:00 means the date begins at 01:00; a repeated 23:00 belongs to the
//    earlier date both times.
//
// nextOpening / nextClosing walk constant-offset segments of the zone (see
// zone-offsets.ts): inside a segment local time is UTC plus a constant, so the next change
// of the open state is found with day arithmetic and mapped back exactly; at each offset
// change the walk restarts from the fields of the new offset. Results therefore agree with
// isOpen to the millisecond, with no sampling.

import { DAY_MS, ZoneTimelines, dayNumberOfIsoDate, weekdayOfDay } from './zone-offsets.js';
import type { ZoneTimeline } from './zone-offsets.js';

/** Luxon weekday numbers: 1 = Monday … 7 = Sunday. */
export type Weekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** The calling-window fields of a campaign's configuration (time/ sits below config/). */
export interface CampaignWindowFields {
  allowedDays: readonly Weekday[];
  /** Seconds after local midnight. */
  allowedHoursStart: number;
  allowedHoursEnd: number;
  /** Whole local days without calls, `YYYY-MM-DD`. */
  blackoutDates: readonly string[];
}

export interface WindowSpec {
  /** IANA zone whose wall clock the window is read on. */
  timezone: string;
  /** Allowed local weekdays, luxon numbers 1 = Monday … 7 = Sunday. */
  days: readonly Weekday[];
  /** Seconds after local midnight, 0 … 86399. */
  start: number;
  end: number;
  /** Local dates (`YYYY-MM-DD`) with no window. */
  blackoutDates?: readonly string[];
}

/** How far nextOpening / nextClosing look before answering null. */
export const WINDOW_HORIZON_MS = 400 * DAY_MS;

const ALL_DAYS: readonly Weekday[] = [1, 2, 3, 4, 5, 6, 7];

type Kind = 'inside' | 'overnight' | 'whole-day';

interface CompiledWindow {
  timeline: ZoneTimeline;
  /** allowed[w] for luxon weekday w (index 0 unused). */
  allowed: boolean[];
  blackout: Set<number>;
  startMs: number;
  endMs: number;
  kind: Kind;
}

// Pure memos: a compiled form per spec object (specs are treated as immutable) and the
// offset timelines of zones (immutable tz data). They change no result, only speed.
const compiled = new WeakMap<WindowSpec, CompiledWindow>();
const timelines = new ZoneTimelines();

function compile(spec: WindowSpec): CompiledWindow {
  let c = compiled.get(spec);
  if (c) return c;
  const { start, end } = spec;
  for (const [name, v] of [['start', start], ['end', end]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 86_399) {
      throw new RangeError(`window ${name} must be whole seconds in 0..86399, got ${v}`);
    }
  }
  const allowed = new Array<boolean>(8).fill(false);
  for (const d of spec.days) {
    if (!Number.isInteger(d) || d < 1 || d > 7) throw new RangeError(`window day must be 1..7, got ${d}`);
    allowed[d] = true;
  }
  const blackout = new Set<number>();
  for (const date of spec.blackoutDates ?? []) {
    const n = dayNumberOfIsoDate(date);
    if (n === null) throw new RangeError(`blackout date must be a real YYYY-MM-DD date, got ${date}`);
    blackout.add(n);
  }
  c = {
    timeline: timelines.get(spec.timezone),
    allowed,
    blackout,
    startMs: start * 1000,
    endMs: end * 1000,
    kind: start === end ? 'whole-day' : end < start ? 'overnight' : 'inside',
  };
  compiled.set(spec, c);
  return c;
}

function dayAllowed(c: CompiledWindow, day: number): boolean {
  return c.allowed[weekdayOfDay(day)] === true && (c.blackout.size === 0 || !c.blackout.has(day));
}

/** Open state of a local wall-clock time (epoch ms shifted by the offset). */
function openLocal(c: CompiledWindow, local: number): boolean {
  const day = Math.floor(local / DAY_MS);
  const ms = local - day * DAY_MS;
  switch (c.kind) {
    case 'inside':
      return ms >= c.startMs && ms < c.endMs && dayAllowed(c, day);
    case 'whole-day':
      return dayAllowed(c, day);
    case 'overnight':
      if (ms >= c.startMs) return dayAllowed(c, day);
      return ms < c.endMs && dayAllowed(c, day - 1);
  }
}

/** Smallest local time ≥ `local` and ≤ `limit` that is open, else null (constant offset). */
function nextOpenLocal(c: CompiledWindow, local: number, limit: number): number | null {
  if (openLocal(c, local)) return local;
  // From a closed local time the next open stretch begins at a window start of an allowed day.
  const startMs = c.kind === 'whole-day' ? 0 : c.startMs;
  for (let d = Math.floor(local / DAY_MS); d * DAY_MS + startMs <= limit; d++) {
    const at = d * DAY_MS + startMs;
    if (at >= local && dayAllowed(c, d)) return at;
  }
  return null;
}

/** Smallest local time ≥ `local` and ≤ `limit` that is closed, else null (constant offset). */
function nextClosedLocal(c: CompiledWindow, local: number, limit: number): number | null {
  let at = local;
  while (at <= limit) {
    if (!openLocal(c, at)) return at;
    const day = Math.floor(at / DAY_MS);
    const ms = at - day * DAY_MS;
    // Jump to the end of the open stretch containing `at`; the next one may start right there.
    if (c.kind === 'whole-day') at = (day + 1) * DAY_MS;
    else if (c.kind === 'inside') at = day * DAY_MS + c.endMs;
    else at = ms >= c.startMs ? (day + 1) * DAY_MS + c.endMs : day * DAY_MS + c.endMs;
  }
  return null;
}

/** Walks constant-offset segments from `from` until `find` locates a local time in one. */
function walk(
  c: CompiledWindow,
  from: number,
  find: (c: CompiledWindow, local: number, limit: number) => number | null,
): number | null {
  const horizon = from + WINDOW_HORIZON_MS;
  let t = from;
  while (t <= horizon) {
    const seg = c.timeline.segmentAt(t);
    const last = Math.min(seg.end - 1, horizon);
    const local = find(c, t + seg.offsetMs, last + seg.offsetMs);
    if (local !== null) return local - seg.offsetMs;
    t = seg.end;
  }
  return null;
}

/** True iff the window is open at instant `at` (epoch ms). */
export function isOpen(spec: WindowSpec, at: number): boolean {
  const c = compile(spec);
  return openLocal(c, at + c.timeline.offsetAt(at));
}

/** Smallest instant t ≥ from with isOpen(t), or null if none within 400 days. */
export function nextOpening(spec: WindowSpec, from: number): number | null {
  return walk(compile(spec), from, nextOpenLocal);
}

/** Smallest instant t ≥ from with !isOpen(t), or null if none within 400 days. */
export function nextClosing(spec: WindowSpec, from: number): number | null {
  return walk(compile(spec), from, nextClosedLocal);
}

/** True iff every window is open at `at` (true for none). */
export function isOpenAll(specs: readonly WindowSpec[], at: number): boolean {
  for (const s of specs) if (!isOpen(s, at)) return false;
  return true;
}

/** Smallest instant t ≥ from at which every window is open, or null if none within 400 days. */
export function nextOpeningAll(specs: readonly WindowSpec[], from: number): number | null {
  const horizon = from + WINDOW_HORIZON_MS;
  let t = from;
  // Each round moves t to some window's next opening; every skipped instant had that window
  // closed, so the first t at which no window moves it is the joint opening.
  for (;;) {
    let moved = false;
    for (const s of specs) {
      const n = nextOpening(s, t);
      if (n === null || n > horizon) return null;
      if (n > t) {
        t = n;
        moved = true;
      }
    }
    if (!moved) return t;
  }
}

/** The calling window of a campaign, read in `timezone` (its own zone or the assistant's). */
export function windowFromCampaign(c: CampaignWindowFields, timezone: string): WindowSpec {
  return {
    timezone,
    days: c.allowedDays,
    start: c.allowedHoursStart,
    end: c.allowedHoursEnd,
    blackoutDates: c.blackoutDates,
  };
}

/** The lead's own `lead_local_hours` window, every day, in the lead's zone. */
export function leadLocalWindow(hours: { start: number; end: number }, timezone: string): WindowSpec {
  return { timezone, days: ALL_DAYS, start: hours.start, end: hours.end };
}

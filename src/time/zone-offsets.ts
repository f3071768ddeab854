// Fast UTC-offset lookup for IANA zones, and the wall-clock fields of an instant.
//
// Why not just `DateTime.fromMillis(at, { zone })`? It asks Intl for the offset on every
// call (a formatToParts, a few microseconds), and the engine checks windows per claim and
// per tick. Offsets change only a few times a year, so each zone keeps a small timeline of
// constant-offset segments, found once by sampling luxon's own offset every few hours and
// binary-searching each change to the exact second. The fields computed here are therefore
// exactly the fields luxon would report (same offset source, same arithmetic); the unit
// tests compare the two.
//
// Assumption (documented, true for every zone in tzdata): a zone never changes its offset
// twice within SAMPLE_MS in a way that returns to the same offset.

import { IANAZone } from 'luxon';

export const DAY_MS = 86_400_000;
/** Distance between offset samples; transitions are located exactly between samples. */
const SAMPLE_MS = 6 * 3_600_000;
/** How far coverage grows per extension. */
const CHUNK_MS = 32 * DAY_MS;
/** A query further than this outside the covered range restarts coverage there. */
const RESET_DISTANCE_MS = 800 * DAY_MS;
/** Bound on the number of remembered zones (a pure memo of immutable tz data). */
const MAX_ZONES = 512;

/** Wall-clock fields of an instant in a zone. */
export interface LocalFields {
  /** Local calendar day as days since 1970-01-01 (negative before). */
  dayNumber: number;
  /** Local milliseconds since local midnight, 0 … 86_399_999. */
  msOfDay: number;
  /** Luxon weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
}

/** One stretch of constant offset: `[start, end)` in epoch ms; `end` may be a coverage edge. */
export interface OffsetSegment {
  offsetMs: number;
  end: number;
}

/** Constant-offset segments of one zone over a contiguous, lazily grown range. */
export class ZoneTimeline {
  private readonly zone: IANAZone;
  /** Segment starts, ascending; segment i holds offsets[i] on [starts[i], starts[i+1]). */
  private readonly starts: number[] = [];
  private readonly offsets: number[] = [];
  /** Covered range is [lo, hi]; the last segment is known to extend at least to hi. */
  private lo = 0;
  private hi = 0;
  private lastIdx = 0;

  constructor(name: string) {
    const zone = IANAZone.create(name);
    if (!zone.isValid) throw new RangeError(`unknown time zone: ${name}`);
    this.zone = zone;
  }

  /** Offset (ms to add to UTC to get local wall-clock time) at instant `at`. */
  offsetAt(at: number): number {
    // Index first: indexOf may rebuild the arrays.
    const i = this.indexOf(at);
    return this.offsets[i] as number;
  }

  /** The constant-offset segment containing `at`, with the instant it ends. */
  segmentAt(at: number): OffsetSegment {
    const i = this.indexOf(at);
    if (i === this.starts.length - 1 && this.hi - at < CHUNK_MS) this.extendForward(at + CHUNK_MS);
    const next = this.starts[i + 1];
    return { offsetMs: this.offsets[i] as number, end: next ?? this.hi + 1 };
  }

  private raw(at: number): number {
    // luxon answers in minutes (possibly fractional for old LMT offsets); keep whole ms.
    return Math.round(this.zone.offset(at) * 60_000);
  }

  private indexOf(at: number): number {
    if (this.starts.length === 0 || at < this.lo || at - this.hi > RESET_DISTANCE_MS) this.reset(at);
    if (at > this.hi) this.extendForward(at + CHUNK_MS);
    // Fast path: the same or the next segment as last time (queries mostly move forward).
    const starts = this.starts;
    let i = this.lastIdx;
    if ((starts[i] as number) <= at && (i + 1 >= starts.length || at < (starts[i + 1] as number))) return i;
    i++;
    if (i < starts.length && (starts[i] as number) <= at && (i + 1 >= starts.length || at < (starts[i + 1] as number))) {
      this.lastIdx = i;
      return i;
    }
    let a = 0;
    let b = starts.length - 1;
    while (a < b) {
      const m = (a + b + 1) >> 1;
      if ((starts[m] as number) <= at) a = m;
      else b = m - 1;
    }
    this.lastIdx = a;
    return a;
  }

  private reset(at: number): void {
    const lo = Math.floor((at - CHUNK_MS) / 1000) * 1000;
    this.starts.length = 0;
    this.offsets.length = 0;
    this.starts.push(lo);
    this.offsets.push(this.raw(lo));
    this.lo = lo;
    this.hi = lo;
    this.lastIdx = 0;
    this.extendForward(at + CHUNK_MS);
  }

  private extendForward(target: number): void {
    while (this.hi < target) {
      const from = this.hi;
      const to = from + SAMPLE_MS;
      let last = this.offsets[this.offsets.length - 1] as number;
      let searchFrom = from;
      const atTo = this.raw(to);
      while (atTo !== last) {
        // Offsets are constant within each UTC second (luxon floors to the second), so
        // the change happens at a whole second: find the first second in (searchFrom, to].
        let a = Math.floor(searchFrom / 1000) + 1;
        let b = Math.floor(to / 1000);
        while (a < b) {
          const m = Math.floor((a + b) / 2);
          if (this.raw(m * 1000) !== last) b = m;
          else a = m + 1;
        }
        const at = a * 1000;
        last = this.raw(at);
        this.starts.push(at);
        this.offsets.push(last);
        searchFrom = at;
      }
      this.hi = to;
    }
  }
}

/** Per-zone timelines; a bounded memo owned by whoever creates it (window.ts keeps one). */
export class ZoneTimelines {
  private readonly byName = new Map<string, ZoneTimeline>();

  /** The timeline of `zone`, created on first use; throws RangeError for an unknown zone. */
  get(zone: string): ZoneTimeline {
    let t = this.byName.get(zone);
    if (!t) {
      if (this.byName.size >= MAX_ZONES) this.byName.clear();
      t = new ZoneTimeline(zone);
      this.byName.set(zone, t);
    }
    return t;
  }
}

/** Wall-clock fields of local time `localMs` (epoch ms shifted by the zone's offset). */
export function fieldsOfLocal(localMs: number): LocalFields {
  const dayNumber = Math.floor(localMs / DAY_MS);
  const msOfDay = localMs - dayNumber * DAY_MS;
  // 1970-01-01 was a Thursday (luxon weekday 4).
  const weekday = ((((dayNumber + 3) % 7) + 7) % 7) + 1;
  return { dayNumber, msOfDay, weekday };
}

/** Weekday (1 = Monday … 7 = Sunday) of a local day number. */
export function weekdayOfDay(dayNumber: number): number {
  return ((((dayNumber + 3) % 7) + 7) % 7) + 1;
}

/** Day number of a `YYYY-MM-DD` date, or null if it is not a real calendar date. */
export function dayNumberOfIsoDate(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  const check = new Date(0);
  check.setUTCFullYear(y, mo - 1, d);
  const ms = check.getTime();
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return ms / DAY_MS;
}

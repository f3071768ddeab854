// Rule 1 (docs/design.md §3.1) for the tests' invariants, written apart from the daemon's own
// window code (src/time/window.ts) so that a bug there cannot hide behind the same bug
// here: the wall clock of an instant comes from Intl (the runtime's time-zone database),
// and the rule is applied to its fields the obvious way.

/** A calling window as the config states it: seconds of the local day, ISO weekdays, dates. */
export interface WallWindow {
  timezone: string;
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  days: readonly number[];
  /** Seconds after local midnight; start === end means the whole day. */
  start: number;
  end: number;
  /** Local dates (YYYY-MM-DD) on which nothing may be called. */
  blackoutDates?: readonly string[];
}

/** What the wall clock of `zone` shows at an instant. */
export interface WallClock {
  /** YYYY-MM-DD */
  date: string;
  /** ISO weekday of `date`. */
  weekday: number;
  /** Seconds after local midnight. */
  seconds: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The local date, weekday and time of day of `epochMs` in `zone`, from Intl. */
export function wallClock(epochMs: number, zone: string): WallClock {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    formats.set(zone, format);
  }
  const part: Record<string, string> = {};
  for (const p of format.formatToParts(epochMs)) part[p.type] = p.value;
  const date = `${part.year}-${part.month}-${part.day}`;
  return { date, weekday: isoWeekday(date), seconds: Number(part.hour) * 3600 + Number(part.minute) * 60 + Number(part.second) };
}

/** The calendar day before `date` (YYYY-MM-DD). */
export function previousDate(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/** ISO weekday (1 = Monday) of a calendar date. */
export function isoWeekday(date: string): number {
  const d = new Date(`${date}T00:00:00Z`).getUTCDay();
  return d === 0 ? 7 : d;
}

/**
 * Whether calls may start at `epochMs`: inside [start, end) of an allowed day that is not a
 * blackout date; a window past midnight (start > end) belongs to the day it started on.
 */
export function insideWallWindow(w: WallWindow, epochMs: number): boolean {
  const now = wallClock(epochMs, w.timezone);
  const allowed = (date: string): boolean => w.days.includes(isoWeekday(date)) && !(w.blackoutDates ?? []).includes(date);
  if (w.start === w.end) return allowed(now.date);
  if (w.start < w.end) return now.seconds >= w.start && now.seconds < w.end && allowed(now.date);
  if (now.seconds >= w.start) return allowed(now.date);
  return now.seconds < w.end && allowed(previousDate(now.date));
}

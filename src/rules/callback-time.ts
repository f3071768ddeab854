import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';

// "Call me back tomorrow at three": the time a person asked for, read from what the
// assistant extracted, in the PERSON's zone. chrono-node reads the words (English and
// German, the reading that covers more of them) and ISO 8601; luxon places the wall-clock time in the zone, so a callback asked
// across a daylight-saving change lands at the hour the person meant:
//  - a relative time ("in 2 hours", "in zwei Stunden") is that long after the call ended;
//  - a time with an explicit offset ("2026-12-01T15:00+02:00") is that instant;
//  - any other time is wall-clock time in the person's zone ("tomorrow at 3 pm" is 15:00
//    there, whatever the offset that day); a time of day that does not exist there (the
//    hour skipped in spring) moves forward by the gap, as a clock would;
//  - a day without a time ("next Monday") is that day's start: the calling window then
//    decides the first moment it may be called.
// What cannot be read, lies in the past, or lies beyond the horizon is refused with a
// reason, and is recorded, never scheduled.

export type CallbackReading =
  | { ok: true; at: number; asked: string; zone: string; how: 'relative' | 'offset' | 'local' }
  | { ok: false; asked: string; reason: string };

export interface CallbackReadOptions {
  /** When the call ended (epoch ms): "tomorrow" and "in 2 hours" count from here. */
  reference: number;
  /** The person's IANA zone. */
  zone: string;
  /** Times further ahead than this are refused. */
  horizonDays: number;
}

const PARSERS = [chrono.en, chrono.de] as const;
const DAY_MS = 86_400_000;
/** The longest text read: an assistant's extraction, not a transcript. */
const MAX_CHARS = 200;

export function readCallbackTime(value: unknown, opts: CallbackReadOptions): CallbackReading {
  const asked = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
  if (asked === '') return { ok: false, asked, reason: 'no time was given' };
  if (asked.length > MAX_CHARS) return { ok: false, asked: asked.slice(0, MAX_CHARS), reason: `the text is over ${MAX_CHARS} characters` };
  const local = DateTime.fromMillis(opts.reference, { zone: opts.zone });
  if (!local.isValid) return { ok: false, asked, reason: `"${opts.zone}" is not a time zone` };
  // chrono reads against the person's wall clock, written as if it were UTC: its answer's
  // fields are then that wall clock's fields, which luxon places in the real zone.
  const floating = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond);
  // Each language's reading; the one covering more of the words wins (English first on a
  // tie): English reads a bare "9:30" out of "übermorgen um 9:30" and would lose the day.
  let found: chrono.ParsedResult | undefined;
  for (const parser of PARSERS) {
    const reading = parser.parse(asked, { instant: new Date(floating), timezone: 0 }, { forwardDate: true })[0];
    if (reading && (!found || reading.text.length > found.text.length)) found = reading;
    // A reading of every word cannot be beaten (a tie keeps the first): the next language
    // would only double the cost (~0.2 ms) of "tomorrow at 3 pm" or an ISO time.
    if (found?.text.length === asked.length) break;
  }
  if (!found) return { ok: false, asked, reason: 'no date or time could be read from it' };
  const start = found.start;
  const tags = start.tags();
  let at: number;
  let how: 'relative' | 'offset' | 'local';
  let dateOnly = false;
  if (tags.has('result/relativeDateAndTime') || tags.has('result/relativeDate')) {
    at = opts.reference + (start.date().getTime() - floating);
    how = 'relative';
  } else if (start.isCertain('timezoneOffset')) {
    at = start.date().getTime();
    how = 'offset';
  } else {
    const timeGiven = start.isCertain('hour') || [...tags].some((t) => t.startsWith('casualReference/') && t !== 'casualReference/tomorrow' && t !== 'casualReference/today');
    const wall = DateTime.fromObject(
      {
        year: start.get('year')!,
        month: start.get('month')!,
        day: start.get('day')!,
        hour: timeGiven ? start.get('hour')! : 0,
        minute: timeGiven ? (start.get('minute') ?? 0) : 0,
        second: timeGiven ? (start.get('second') ?? 0) : 0,
      },
      { zone: opts.zone },
    );
    at = wall.toMillis();
    how = 'local';
    dateOnly = !timeGiven;
  }
  if (!Number.isFinite(at)) return { ok: false, asked, reason: 'no date or time could be read from it' };
  // A day without a time, asked for today ("heute"), is a callback today: from the call's end on.
  if (dateOnly && at < opts.reference && at + DAY_MS > opts.reference) at = opts.reference;
  if (at < opts.reference) return { ok: false, asked, reason: 'the time is in the past' };
  if (at - opts.reference > opts.horizonDays * DAY_MS) return { ok: false, asked, reason: `the time is more than ${opts.horizonDays} days ahead` };
  return { ok: true, at, asked, zone: opts.zone, how };
}

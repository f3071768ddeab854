// Reading the time a person asked to be called back, in their own zone, against values
// worked out by hand (and luxon's zone data for the offsets).
import { describe, expect, it } from 'vitest';
import { readCallbackTime } from '../../src/rules/callback-time.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const read = (text: unknown, reference: string, zone: string, horizonDays = 30) => readCallbackTime(text, { reference: Date.parse(reference), zone, horizonDays });
const at = (text: unknown, reference: string, zone: string): string => {
  const r = read(text, reference, zone);
  if (!r.ok) throw new Error(`${String(text)}: ${r.reason}`);
  return iso(r.at);
};

describe('the callback time a person asked for', () => {
  it('reads English and German words as wall-clock time in the person’s zone', () => {
    // 14:00 UTC is 15:00 in Berlin (CET, +1) and 09:00 in New York (EST, -5).
    expect(at('tomorrow at 3 pm', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-27T14:00:00.000Z');
    expect(at('morgen um 15 Uhr', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-27T14:00:00.000Z');
    expect(at('tomorrow at 3 pm', '2026-11-26T14:00:00Z', 'America/New_York')).toBe('2026-11-27T20:00:00.000Z');
    expect(at('at 9', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-27T08:00:00.000Z');
  });

  it('takes the reading that covers the whole phrase, not the bare time English reads out of German words', () => {
    // Thursday 26 November 2026, 15:00 in Berlin. English alone reads only "9:30" (today, or
    // tomorrow) out of these; the German reading covers the day as well.
    expect(at('übermorgen um 9:30', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-28T08:30:00.000Z');
    expect(at('nächsten Montag um 10:30', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-30T09:30:00.000Z');
    // An English phrase keeps its English reading.
    expect(at('next Monday at 10:30', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-30T09:30:00.000Z');
  });

  it('counts a relative time from the end of the call, whatever the zone', () => {
    expect(at('in 2 hours', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-26T16:00:00.000Z');
    expect(at('in zwei Stunden', '2026-11-26T14:00:00Z', 'Asia/Tokyo')).toBe('2026-11-26T16:00:00.000Z');
    // Across the night Berlin's clocks go forward (2026-03-29 02:00 → 03:00): still 10 hours of real time.
    expect(at('in 10 hours', '2026-03-28T20:00:00Z', 'Europe/Berlin')).toBe('2026-03-29T06:00:00.000Z');
  });

  it('reads ISO 8601 with an offset as that instant, and without one in the person’s zone', () => {
    expect(at('2026-12-01T15:00+02:00', '2026-11-26T14:00:00Z', 'America/New_York')).toBe('2026-12-01T13:00:00.000Z');
    expect(at('2026-12-01T15:00', '2026-11-26T14:00:00Z', 'America/New_York')).toBe('2026-12-01T20:00:00.000Z');
    expect(at('2026-12-01T15:00', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-12-01T14:00:00.000Z');
  });

  it('keeps the hour the person meant across a daylight-saving change', () => {
    // Asked on Saturday 2026-03-28 (CET, +1) for Sunday 15:00, when Berlin is on CEST (+2).
    expect(at('tomorrow at 3 pm', '2026-03-28T10:00:00Z', 'Europe/Berlin')).toBe('2026-03-29T13:00:00.000Z');
    // New York falls back on 2026-11-01: Sunday 15:00 is EST (-5), the day before EDT (-4).
    expect(at('tomorrow at 3 pm', '2026-10-31T14:00:00Z', 'America/New_York')).toBe('2026-11-01T20:00:00.000Z');
    // 02:30 does not exist in Berlin on 2026-03-29: it moves forward by the hour skipped.
    expect(at('tomorrow at 2:30 am', '2026-03-28T10:00:00Z', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z');
  });

  it('takes a day without a time from the start of that day (the window decides the hour)', () => {
    // Monday 2026-11-30 00:00 in Berlin.
    expect(at('next monday', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-29T23:00:00.000Z');
    // "today" is a callback from the end of the call on, not a time in the past.
    expect(at('today', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toBe('2026-11-26T14:00:00.000Z');
  });

  it('refuses what cannot be read, what is past, and what is beyond the horizon, with the words asked', () => {
    expect(read('call me never', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toEqual({ ok: false, asked: 'call me never', reason: 'no date or time could be read from it' });
    expect(read('', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toMatchObject({ ok: false, reason: 'no time was given' });
    expect(read(null, '2026-11-26T14:00:00Z', 'Europe/Berlin')).toMatchObject({ ok: false, reason: 'no time was given' });
    expect(read('2026-11-01T10:00Z', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toMatchObject({ ok: false, reason: 'the time is in the past' });
    expect(read('in 45 days', '2026-11-26T14:00:00Z', 'Europe/Berlin')).toMatchObject({ ok: false, reason: 'the time is more than 30 days ahead' });
    expect(read('tomorrow at 3 pm', '2026-11-26T14:00:00Z', 'Mars/Olympus')).toMatchObject({ ok: false, reason: '"Mars/Olympus" is not a time zone' });
  });
});

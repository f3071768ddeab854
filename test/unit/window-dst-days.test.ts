// Both daylight-saving days of each zone, worked out by hand from the tz rules:
// every expected instant below is written in UTC, independent of the code under test.

import { describe, expect, it } from 'vitest';
import type { Weekday } from '../../src/config/types.js';
import { isOpen, nextClosing, nextOpening, type WindowSpec } from '../../src/time/window.js';

const Z = (iso: string): number => Date.parse(iso);
const h = (hh: number, mm = 0): number => hh * 3600 + mm * 60;
const ALL: Weekday[] = [1, 2, 3, 4, 5, 6, 7];
const win = (timezone: string, start: number, end: number, days: Weekday[] = ALL, blackoutDates?: string[]): WindowSpec =>
  ({ timezone, days, start, end, ...(blackoutDates ? { blackoutDates } : {}) });
const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** Asserts the window's open stretches after `from`, as [open, close) pairs in UTC. */
function expectStretches(w: WindowSpec, from: string, stretches: [string, string][]): void {
  let t = Z(from);
  for (const [open, close] of stretches) {
    const o = nextOpening(w, t);
    expect(iso(o)).toBe(new Date(Z(open)).toISOString());
    expect(isOpen(w, Z(open) - 1)).toBe(false);
    expect(isOpen(w, Z(open))).toBe(true);
    const c = nextClosing(w, Z(open));
    expect(iso(c)).toBe(new Date(Z(close)).toISOString());
    expect(isOpen(w, Z(close) - 1)).toBe(true);
    expect(isOpen(w, Z(close))).toBe(false);
    t = Z(close);
  }
}

describe('Europe/Berlin (CET +01, CEST +02; changes at 01:00Z)', () => {
  const tz = 'Europe/Berlin';
  it('2026-03-29: a start inside the 02:00–03:00 gap opens at 03:00 CEST = 01:00Z', () => {
    expectStretches(win(tz, h(2, 30), h(5)), '2026-03-28T23:00:00Z', [
      ['2026-03-29T01:00:00Z', '2026-03-29T03:00:00Z'],
      ['2026-03-30T00:30:00Z', '2026-03-30T03:00:00Z'],
    ]);
    expect(isOpen(win(tz, h(2, 30), h(5)), Z('2026-03-29T00:59:59.999Z'))).toBe(false);
  });
  it('2026-03-29: a window wholly inside the gap does not open that day', () => {
    expect(iso(nextOpening(win(tz, h(2), h(2, 30)), Z('2026-03-28T23:00:00Z')))).toBe('2026-03-30T00:00:00.000Z');
  });
  it('2026-03-29: an end inside the gap closes when the gap ends', () => {
    expectStretches(win(tz, h(1), h(2, 30)), '2026-03-28T23:00:00Z', [['2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z']]);
  });
  it('2026-10-25: 02:30–03:00 is open in both occurrences of 02:30', () => {
    expectStretches(win(tz, h(2, 30), h(3)), '2026-10-24T22:00:00Z', [
      ['2026-10-25T00:30:00Z', '2026-10-25T01:00:00Z'], // 02:30–03:00 CEST
      ['2026-10-25T01:30:00Z', '2026-10-25T02:00:00Z'], // 02:30–03:00 CET
    ]);
  });
  it('2026-10-25: a window ending at 02:30 reopens for the repeated 02:00–02:30', () => {
    expectStretches(win(tz, h(1), h(2, 30)), '2026-10-24T22:00:00Z', [
      ['2026-10-24T23:00:00Z', '2026-10-25T00:30:00Z'],
      ['2026-10-25T01:00:00Z', '2026-10-25T01:30:00Z'],
      ['2026-10-26T00:00:00Z', '2026-10-26T01:30:00Z'],
    ]);
  });
});

describe('America/New_York (EST −05, EDT −04)', () => {
  const tz = 'America/New_York';
  it('2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00Z', () => {
    expectStretches(win(tz, h(2, 30), h(5)), '2026-03-08T05:00:00Z', [
      ['2026-03-08T07:00:00Z', '2026-03-08T09:00:00Z'],
      ['2026-03-09T06:30:00Z', '2026-03-09T09:00:00Z'],
    ]);
  });
  it('2026-11-01: 01:15–01:45 is open in the EDT and the EST 01:15', () => {
    expectStretches(win(tz, h(1, 15), h(1, 45)), '2026-11-01T04:00:00Z', [
      ['2026-11-01T05:15:00Z', '2026-11-01T05:45:00Z'],
      ['2026-11-01T06:15:00Z', '2026-11-01T06:45:00Z'],
      ['2026-11-02T06:15:00Z', '2026-11-02T06:45:00Z'],
    ]);
  });
  it('2026-11-01: a Saturday-night window 22:00–01:30 runs twice through 01:00–01:30', () => {
    expectStretches(win(tz, h(22), h(1, 30), [6]), '2026-10-31T12:00:00Z', [
      ['2026-11-01T02:00:00Z', '2026-11-01T05:30:00Z'], // Sat 22:00 EDT – Sun 01:30 EDT
      ['2026-11-01T06:00:00Z', '2026-11-01T06:30:00Z'], // Sun 01:00–01:30 EST, still Saturday's
      ['2026-11-08T03:00:00Z', '2026-11-08T06:30:00Z'], // next Saturday, EST
    ]);
  });
});

describe('America/Santiago (−03 summer, −04 winter; changes at local midnight)', () => {
  const tz = 'America/Santiago';
  it('2026-04-05 03:00Z: Saturday 24:00 −03 falls back to 23:00 −04, Apr 4 has two 23:00s', () => {
    expectStretches(win(tz, h(23), h(23, 30)), '2026-04-04T12:00:00Z', [
      ['2026-04-05T02:00:00Z', '2026-04-05T02:30:00Z'],
      ['2026-04-05T03:00:00Z', '2026-04-05T03:30:00Z'],
    ]);
  });
  it('2026-04-05: a Saturday-only 23:30–00:30 window closes for the repeated 23:00–23:30', () => {
    expectStretches(win(tz, h(23, 30), h(0, 30), [6]), '2026-04-04T12:00:00Z', [
      ['2026-04-05T02:30:00Z', '2026-04-05T03:00:00Z'],
      ['2026-04-05T03:30:00Z', '2026-04-05T04:30:00Z'],
    ]);
  });
  it('2026-09-06 04:00Z: Saturday 24:00 −04 jumps to Sunday 01:00 −03', () => {
    // A Sunday window starting at midnight opens when Sunday begins, at 01:00 −03.
    expectStretches(win(tz, h(0), h(2), [7]), '2026-09-05T12:00:00Z', [['2026-09-06T04:00:00Z', '2026-09-06T05:00:00Z']]);
    // A Saturday window running past midnight ends in the gap: it closes when the gap ends.
    expectStretches(win(tz, h(22), h(0, 30), [6]), '2026-09-05T12:00:00Z', [['2026-09-06T02:00:00Z', '2026-09-06T04:00:00Z']]);
  });
  it('2026-09-06: a blackout of the short Sunday starts at 01:00 −03', () => {
    const w = win(tz, h(9), h(9), ALL, ['2026-09-06']);
    expect(iso(nextClosing(w, Z('2026-09-05T15:00:00Z')))).toBe('2026-09-06T04:00:00.000Z');
    expect(iso(nextOpening(w, Z('2026-09-06T04:00:00Z')))).toBe('2026-09-07T03:00:00.000Z');
  });
});

describe('Australia/Lord_Howe (+10:30 standard, +11 summer: a half-hour change)', () => {
  const tz = 'Australia/Lord_Howe';
  it('2026-04-05: 02:00 +11 falls back to 01:30 +10:30 at 15:00Z; 01:30–02:00 stays open an hour', () => {
    expectStretches(win(tz, h(1, 30), h(2)), '2026-04-04T12:00:00Z', [
      ['2026-04-04T14:30:00Z', '2026-04-04T15:30:00Z'],
      ['2026-04-05T15:00:00Z', '2026-04-05T15:30:00Z'],
    ]);
  });
  it('2026-10-04: 02:00 +10:30 jumps to 02:30 +11 at 15:30Z; a 02:10 start opens then', () => {
    expectStretches(win(tz, h(2, 10), h(4)), '2026-10-03T12:00:00Z', [
      ['2026-10-03T15:30:00Z', '2026-10-03T17:00:00Z'],
      ['2026-10-04T15:10:00Z', '2026-10-04T17:00:00Z'],
    ]);
  });
});

describe('zones without daylight saving', () => {
  it('Asia/Kathmandu is +05:45 all year', () => {
    const tz = 'Asia/Kathmandu';
    expectStretches(win(tz, h(9), h(18), [1, 2, 3, 4, 5]), '2026-11-21T12:00:00Z', [['2026-11-23T03:15:00Z', '2026-11-23T12:15:00Z']]);
    expectStretches(win(tz, h(23, 50), h(0, 10), [5]), '2026-11-23T00:00:00Z', [['2026-11-27T18:05:00Z', '2026-11-27T18:25:00Z']]);
    expectStretches(win(tz, h(9), h(18)), '2026-06-21T00:00:00Z', [['2026-06-21T03:15:00Z', '2026-06-21T12:15:00Z']]);
  });
  it('Pacific/Kiritimati is +14: local Monday starts on Sunday in UTC', () => {
    const tz = 'Pacific/Kiritimati';
    const w = win(tz, h(9), h(18), [1, 2, 3, 4, 5], ['2026-11-24']);
    expect(isOpen(w, Z('2026-11-22T19:00:00Z'))).toBe(true);
    expectStretches(w, '2026-11-21T00:00:00Z', [
      ['2026-11-22T19:00:00Z', '2026-11-23T04:00:00Z'], // Monday
      ['2026-11-24T19:00:00Z', '2026-11-25T04:00:00Z'], // Wednesday (Tuesday blacked out)
    ]);
  });
});

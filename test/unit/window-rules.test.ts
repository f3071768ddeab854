// Rule 1 case by case: weekdays, blackout dates (also on windows past midnight), whole days,
// joint windows, the campaign/lead constructors, and bad input.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CampaignConfig, Weekday } from '../../src/config/types.js';
import {
  isOpen,
  isOpenAll,
  leadLocalWindow,
  nextClosing,
  nextOpening,
  nextOpeningAll,
  windowFromCampaign,
  type WindowSpec,
} from '../../src/time/window.js';

const Z = (iso: string): number => Date.parse(iso);
const h = (hh: number, mm = 0): number => hh * 3600 + mm * 60;
const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());
const UTC = 'UTC';
// 2026-11-20 is a Friday.

describe('weekdays', () => {
  const w: WindowSpec = { timezone: UTC, days: [1, 2, 3, 4, 5], start: h(9), end: h(18) };
  it('is open on an allowed day inside [start, end) only', () => {
    expect(isOpen(w, Z('2026-11-20T09:00:00Z'))).toBe(true);
    expect(isOpen(w, Z('2026-11-20T08:59:59.999Z'))).toBe(false);
    expect(isOpen(w, Z('2026-11-20T17:59:59.999Z'))).toBe(true);
    expect(isOpen(w, Z('2026-11-20T18:00:00Z'))).toBe(false);
    expect(isOpen(w, Z('2026-11-21T12:00:00Z'))).toBe(false); // Saturday
  });
  it('skips the weekend to Monday', () => {
    expect(iso(nextOpening(w, Z('2026-11-20T18:00:00Z')))).toBe('2026-11-23T09:00:00.000Z');
  });
  it('keeps millisecond precision from an unaligned start', () => {
    expect(nextOpening(w, Z('2026-11-20T10:00:00.123Z'))).toBe(Z('2026-11-20T10:00:00.123Z'));
    expect(nextClosing(w, Z('2026-11-20T10:00:00.123Z'))).toBe(Z('2026-11-20T18:00:00Z'));
    expect(nextClosing(w, Z('2026-11-21T10:00:00.5Z'))).toBe(Z('2026-11-21T10:00:00.5Z'));
  });
  it('no allowed day: never opens', () => {
    expect(nextOpening({ ...w, days: [] }, Z('2026-11-20T00:00:00Z'))).toBeNull();
  });
  it('always open: never closes within the horizon', () => {
    expect(nextClosing({ timezone: UTC, days: [1, 2, 3, 4, 5, 6, 7], start: 0, end: 0 }, Z('2026-11-20T00:00:00Z'))).toBeNull();
  });
});

describe('past midnight', () => {
  // Friday only, 22:00–02:00: belongs to Friday.
  const w: WindowSpec = { timezone: UTC, days: [5], start: h(22), end: h(2) };
  it('belongs to the day it starts on', () => {
    expect(isOpen(w, Z('2026-11-20T23:00:00Z'))).toBe(true); // Fri 23:00
    expect(isOpen(w, Z('2026-11-21T01:00:00Z'))).toBe(true); // Sat 01:00, Saturday not allowed
    expect(isOpen(w, Z('2026-11-21T02:00:00Z'))).toBe(false);
    expect(isOpen(w, Z('2026-11-21T22:30:00Z'))).toBe(false); // Sat 22:30
    expect(isOpen(w, Z('2026-11-20T01:00:00Z'))).toBe(false); // Fri 01:00 belongs to Thursday
  });
  it('a blackout of the start day closes the whole night; one of the next day does not', () => {
    const fri = { ...w, blackoutDates: ['2026-11-20'] };
    expect(isOpen(fri, Z('2026-11-20T23:00:00Z'))).toBe(false);
    expect(isOpen(fri, Z('2026-11-21T01:00:00Z'))).toBe(false);
    expect(iso(nextOpening(fri, Z('2026-11-20T12:00:00Z')))).toBe('2026-11-27T22:00:00.000Z');
    const sat = { ...w, blackoutDates: ['2026-11-21'] };
    expect(isOpen(sat, Z('2026-11-21T01:00:00Z'))).toBe(true);
    expect(iso(nextClosing(sat, Z('2026-11-20T22:00:00Z')))).toBe('2026-11-21T02:00:00.000Z');
  });
  it('ends at midnight exactly when end is 00:00', () => {
    const m: WindowSpec = { timezone: UTC, days: [5], start: h(22), end: 0 };
    expect(iso(nextClosing(m, Z('2026-11-20T22:00:00Z')))).toBe('2026-11-21T00:00:00.000Z');
  });
});

describe('equal start and end', () => {
  const w: WindowSpec = { timezone: UTC, days: [5, 6], start: h(9), end: h(9), blackoutDates: ['2026-11-21'] };
  it('opens the whole calendar day', () => {
    expect(isOpen(w, Z('2026-11-20T00:00:00Z'))).toBe(true);
    expect(isOpen(w, Z('2026-11-20T23:59:59.999Z'))).toBe(true);
    expect(isOpen(w, Z('2026-11-21T12:00:00Z'))).toBe(false); // blackout
    expect(iso(nextClosing(w, Z('2026-11-20T05:00:00Z')))).toBe('2026-11-21T00:00:00.000Z');
    expect(iso(nextOpening(w, Z('2026-11-21T05:00:00Z')))).toBe('2026-11-27T00:00:00.000Z');
  });
  it('merges consecutive whole days into one open stretch', () => {
    const both: WindowSpec = { timezone: UTC, days: [5, 6], start: 0, end: 0 };
    expect(iso(nextClosing(both, Z('2026-11-20T05:00:00Z')))).toBe('2026-11-22T00:00:00.000Z');
  });
});

describe('joint windows (campaign and lead local hours)', () => {
  const campaign: WindowSpec = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], start: h(9), end: h(18) };
  const lead = leadLocalWindow({ start: h(8), end: h(21) }, 'America/New_York');
  it('is open only where both are', () => {
    // Mon 2026-11-23: Berlin 09:00–18:00 = 08:00Z–17:00Z; New York 08:00–21:00 = 13:00Z–02:00Z.
    expect(isOpenAll([campaign, lead], Z('2026-11-23T12:59:59Z'))).toBe(false);
    expect(isOpenAll([campaign, lead], Z('2026-11-23T13:00:00Z'))).toBe(true);
    expect(iso(nextOpeningAll([campaign, lead], Z('2026-11-23T00:00:00Z')))).toBe('2026-11-23T13:00:00.000Z');
    expect(iso(nextOpeningAll([campaign, lead], Z('2026-11-23T17:00:00Z')))).toBe('2026-11-24T13:00:00.000Z');
  });
  it('never, when the windows never meet', () => {
    const night = leadLocalWindow({ start: h(1), end: h(2) }, 'Europe/Berlin');
    expect(nextOpeningAll([campaign, night], Z('2026-11-23T00:00:00Z'))).toBeNull();
  });
  it('no windows: open at once', () => {
    expect(isOpenAll([], 0)).toBe(true);
    expect(nextOpeningAll([], 1234)).toBe(1234);
  });
  it('agrees with isOpenAll for random windows and instants', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
    const spec = fc.record({
      timezone: fc.constantFrom(...zones),
      days: fc.subarray([1, 2, 3, 4, 5, 6, 7] as Weekday[], { minLength: 1 }),
      start: fc.integer({ min: 0, max: 95 }).map((q) => q * 900),
      end: fc.integer({ min: 0, max: 95 }).map((q) => q * 900),
    });
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 3 }), fc.integer({ min: Z('2026-01-01T00:00:00Z'), max: Z('2027-01-01T00:00:00Z') }), (specs, from) => {
        const t = nextOpeningAll(specs, from);
        if (t === null) return;
        expect(isOpenAll(specs, t)).toBe(true);
        expect(t).toBeGreaterThanOrEqual(from);
        if (t === from) return;
        expect(isOpenAll(specs, t - 1)).toBe(false);
        // Sampled points in [from, t) are all closed.
        for (let k = 0; k <= 20; k++) expect(isOpenAll(specs, from + Math.floor(((t - from) * k) / 21))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('constructors', () => {
  const campaign = {
    name: 'c', file: '/x/c.yaml', assistantId: 1, allowedDays: [1, 3] as Weekday[], allowedHoursStart: h(9),
    allowedHoursEnd: h(17), maxCallsInParallel: 1, maxRetries: 0, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true,
    retryOn: [], blackoutDates: ['2026-12-24'], initialStatus: 'running', leads: {}, allowDuplicates: false,
  } satisfies CampaignConfig;
  it('windowFromCampaign copies days, hours and blackouts into the given zone', () => {
    expect(windowFromCampaign(campaign, 'Asia/Kathmandu')).toEqual({
      timezone: 'Asia/Kathmandu', days: [1, 3], start: h(9), end: h(17), blackoutDates: ['2026-12-24'],
    });
  });
  it('leadLocalWindow allows every day', () => {
    expect(leadLocalWindow({ start: h(8), end: h(21) }, 'UTC')).toEqual({ timezone: 'UTC', days: [1, 2, 3, 4, 5, 6, 7], start: h(8), end: h(21) });
  });
});

describe('bad input', () => {
  const ok: WindowSpec = { timezone: UTC, days: [1], start: 0, end: 10 };
  it('throws RangeError naming the problem', () => {
    expect(() => isOpen({ ...ok, timezone: 'Mars/Olympus' }, 0)).toThrow(/time zone/);
    expect(() => isOpen({ ...ok, start: 86_400 }, 0)).toThrow(RangeError);
    expect(() => isOpen({ ...ok, end: 1.5 }, 0)).toThrow(RangeError);
    expect(() => isOpen({ ...ok, days: [8 as Weekday] }, 0)).toThrow(RangeError);
    expect(() => isOpen({ ...ok, blackoutDates: ['2026-02-30'] }, 0)).toThrow(/blackout/);
  });
});

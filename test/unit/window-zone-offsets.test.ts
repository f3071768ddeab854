// The offset timeline must report exactly the wall-clock fields luxon reports, including
// around every offset change and for queries that jump back and forth across decades.

import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { ZoneTimeline, dayNumberOfIsoDate, fieldsOfLocal } from '../../src/time/zone-offsets.js';

const ZONES = [
  'Europe/Berlin', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu',
  'Pacific/Kiritimati', 'Africa/Casablanca', 'Europe/Dublin', 'Antarctica/Troll', 'America/St_Johns', 'UTC',
];

function expectSameFields(zone: string, tl: ZoneTimeline, t: number): void {
  const dt = DateTime.fromMillis(t, { zone });
  const f = fieldsOfLocal(t + tl.offsetAt(t));
  const got = { dayNumber: f.dayNumber, msOfDay: f.msOfDay, weekday: f.weekday };
  const want = {
    dayNumber: Date.UTC(dt.year, dt.month - 1, dt.day) / 86_400_000,
    msOfDay: ((dt.hour * 60 + dt.minute) * 60 + dt.second) * 1000 + dt.millisecond,
    weekday: dt.weekday,
  };
  if (got.dayNumber !== want.dayNumber || got.msOfDay !== want.msOfDay || got.weekday !== want.weekday) {
    expect({ zone, at: new Date(t).toISOString(), ...got }).toEqual({ zone, at: new Date(t).toISOString(), ...want });
  }
}

describe.each(ZONES)('fields in %s', (zone) => {
  it('match luxon through 2026, and minute by minute around every offset change', () => {
    const tl = new ZoneTimeline(zone);
    const luxon = IANAZone.create(zone);
    const from = Date.UTC(2026, 0, 1);
    const to = Date.UTC(2027, 0, 1);
    for (let t = from; t < to; t += 131 * 60_000 + 1_234) expectSameFields(zone, tl, t);
    let changes = 0;
    const step = 6 * 3_600_000;
    for (let t = from; t < to; t += step) {
      if (luxon.offset(t) === luxon.offset(t + step)) continue;
      changes++;
      for (let u = t - 3_600_000; u < t + step + 3_600_000; u += 60_000) {
        expectSameFields(zone, tl, u);
        expectSameFields(zone, tl, u - 1);
      }
    }
    if (zone === 'Europe/Berlin' || zone === 'Australia/Lord_Howe') expect(changes).toBe(2);
    if (zone === 'Asia/Kathmandu' || zone === 'UTC') expect(changes).toBe(0);
  });
});

describe('timeline', () => {
  it('answers random instants 1950–2100 in any order', () => {
    const tl = new ZoneTimeline('America/Santiago');
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2100, 0, 1) }), (t) => {
        expectSameFields('America/Santiago', tl, t);
      }),
      { numRuns: 150 },
    );
  });
  it('segments end exactly at the offset change', () => {
    const tl = new ZoneTimeline('Europe/Berlin');
    const seg = tl.segmentAt(Date.UTC(2026, 2, 1));
    expect(seg.offsetMs).toBe(3_600_000);
    expect(seg.end).toBe(Date.UTC(2026, 2, 29, 1));
    expect(tl.offsetAt(seg.end)).toBe(7_200_000);
    expect(tl.offsetAt(seg.end - 1)).toBe(3_600_000);
  });
  it('rejects an unknown zone', () => {
    expect(() => new ZoneTimeline('Nowhere/Special')).toThrow(RangeError);
  });
});

describe('dayNumberOfIsoDate', () => {
  it('reads real dates and rejects the rest', () => {
    expect(dayNumberOfIsoDate('1970-01-01')).toBe(0);
    expect(dayNumberOfIsoDate('2026-11-23')).toBe(Date.UTC(2026, 10, 23) / 86_400_000);
    expect(dayNumberOfIsoDate('0050-01-01')).toBe(Date.parse('0050-01-01T00:00:00Z') / 86_400_000);
    expect(dayNumberOfIsoDate('2026-02-29')).toBeNull();
    expect(dayNumberOfIsoDate('2026-1-01')).toBeNull();
    expect(dayNumberOfIsoDate('24.12.2026')).toBeNull();
  });
});

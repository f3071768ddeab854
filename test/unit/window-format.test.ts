// Human forms of durations and local times used by `status` and `explain`.

import { describe, expect, it } from 'vitest';
import { formatIn, formatLocal } from '../../src/time/duration-format.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;

describe('formatIn', () => {
  it('gives the two largest units', () => {
    expect(formatIn(3 * H + 12 * MIN + 40 * S)).toBe('in 3 h 12 min');
    expect(formatIn(45 * S)).toBe('in 45 s');
    expect(formatIn(2 * D + 4 * H + 59 * MIN)).toBe('in 2 d 4 h');
    expect(formatIn(90 * S)).toBe('in 1 min 30 s');
  });
  it('drops a zero second unit and rounds seconds up', () => {
    expect(formatIn(3 * H)).toBe('in 3 h');
    expect(formatIn(2 * D + 30 * MIN)).toBe('in 2 d');
    expect(formatIn(1)).toBe('in 1 s');
    expect(formatIn(59_001)).toBe('in 1 min');
  });
  it('says now for zero or the past', () => {
    expect(formatIn(0)).toBe('now');
    expect(formatIn(-5 * MIN)).toBe('now');
    expect(formatIn(Number.NaN)).toBe('now');
  });
});

describe('formatLocal', () => {
  it('writes local time with its offset and no milliseconds', () => {
    expect(formatLocal(Date.parse('2026-11-23T08:00:00.999Z'), 'Europe/Berlin')).toBe('2026-11-23T09:00:00+01:00');
    expect(formatLocal(Date.parse('2026-07-01T08:00:00Z'), 'Europe/Berlin')).toBe('2026-07-01T10:00:00+02:00');
    expect(formatLocal(Date.parse('2026-11-23T03:15:00Z'), 'Asia/Kathmandu')).toBe('2026-11-23T09:00:00+05:45');
    expect(formatLocal(Date.parse('2026-11-23T03:15:00Z'), 'UTC')).toBe('2026-11-23T03:15:00+00:00');
  });
  it('tells the two occurrences of a repeated hour apart by their offset', () => {
    expect(formatLocal(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+02:00');
    expect(formatLocal(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+01:00');
  });
  it('rejects an unknown zone', () => {
    expect(() => formatLocal(0, 'Nowhere/Special')).toThrow(RangeError);
  });
});

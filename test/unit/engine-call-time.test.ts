// The time rules of matching a call to an attempt (src/engine/call-time.ts).
import { describe, expect, it } from 'vitest';
import { couldBeUnderZoneDoubt, createdAfterSend, createdByArrival, ZONE_DOUBT_MS } from '../../src/engine/call-time.js';

const H = 3_600_000;
const SENT = Date.UTC(2026, 0, 5, 10, 0, 0);
const SKEW = 60_000;

describe('matching a call to an attempt by time', () => {
  it('a call created after the attempt was sent (less the skew) can be its; an unreadable time does not refuse', () => {
    expect(createdAfterSend(SENT + 2_000, SENT, SKEW)).toBe(true);
    expect(createdAfterSend(SENT - SKEW, SENT, SKEW)).toBe(true);
    expect(createdAfterSend(SENT - SKEW - 1, SENT, SKEW)).toBe(false);
    expect(createdAfterSend(null, SENT, SKEW)).toBe(true);
  });

  it('a refused call is in doubt when a zone up to 14 h west explains it, not beyond', () => {
    // UTC−11 read as UTC: eleven hours early.
    expect(couldBeUnderZoneDoubt(SENT + 2_000 - 11 * H, SENT, SKEW)).toBe(true);
    expect(couldBeUnderZoneDoubt(SENT - SKEW - ZONE_DOUBT_MS, SENT, SKEW)).toBe(true);
    expect(couldBeUnderZoneDoubt(SENT - SKEW - ZONE_DOUBT_MS - 1, SENT, SKEW)).toBe(false);
    // Not refused in the first place, or unreadable: no doubt to speak of.
    expect(couldBeUnderZoneDoubt(SENT, SENT, SKEW)).toBe(false);
    expect(couldBeUnderZoneDoubt(null, SENT, SKEW)).toBe(false);
  });

  it('a webhook places the call by its length counted back from arrival, whatever zone its times are in', () => {
    const received = SENT + 95_000;
    // Created 5 s after sending, talked 90 s; both times read eleven hours early.
    const created = SENT + 5_000 - 11 * H;
    const finished = created + 90_000;
    expect(createdByArrival(created, finished, received)).toBe(SENT + 5_000);
    expect(createdByArrival(null, finished, received)).toBeNull();
    expect(createdByArrival(created, null, received)).toBeNull();
    expect(createdByArrival(finished, created, received)).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { callTimes } from '../../src/results/call-times.js';

// Both ends of a call from one clock: the service's when it gave both, else campaignd's.
const T = Date.UTC(2026, 10, 26, 13, 37, 0);
const ours = { sent_at: T, created_at: T - 5, ended_at: T + 65_000 };

describe('callTimes', () => {
  it("takes both ends from the service's stamps when it gave both", () => {
    // The service's clock runs 6 minutes ahead of ours: still a 60 s call, never a negative one.
    expect(callTimes({ ...ours, started_at: T + 360_000, result_ended_at: T + 420_000 })).toEqual({ startedAt: T + 360_000, endedAt: T + 420_000, from: 'service' });
  });

  it("takes both from campaignd's clock when the service gave no end (never one end from each)", () => {
    expect(callTimes({ ...ours, started_at: T + 360_000, result_ended_at: null })).toEqual({ startedAt: T, endedAt: T + 65_000, from: 'campaignd' });
  });

  it("takes both from campaignd's clock when the service's stamps run backwards", () => {
    expect(callTimes({ ...ours, started_at: T + 60_000, result_ended_at: T })).toEqual({ startedAt: T, endedAt: T + 65_000, from: 'campaignd' });
  });

  it('falls back to when the attempt was written when it has no send time, and leaves a live call without an end', () => {
    expect(callTimes({ started_at: null, result_ended_at: null, sent_at: null, created_at: T, ended_at: null })).toEqual({ startedAt: T, endedAt: null, from: 'campaignd' });
  });
});

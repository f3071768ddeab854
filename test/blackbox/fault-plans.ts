// Fault plans for the black-box fake service. The stress profile's waves each hold for a
// few seconds, then the next, cycling, so a campaign meets every kind of fault several
// times with calm spells in between; the short profile mixes every kind at once. A tenth
// of make_call connections is dropped after the call was created throughout: the daemon
// learns of those calls only from the call list.
import type { FaultRule, FaultWave } from '../e2e/service-under-test.js';

const LOST_ANSWERS: FaultRule = { path: '/api/user/make_call', dropAfterCreate: 0.1 };

/**
 * One cycle of every fault kind: `ms` is each wave's length in real milliseconds, `share`
 * the share of requests a wave's fault hits (a short run needs a high one to meet each).
 */
export function fakeWaves(ms: number, share: number): FaultWave[] {
  return [
    { durationMs: ms, rules: [{ serverError: share, serverStatus: 502, latencyMs: 80 }, LOST_ANSWERS] },
    { durationMs: ms, rules: [{ rateLimited: share, retryAfter: 1, retryAfterIn: 'header' }, LOST_ANSWERS] },
    { durationMs: ms, rules: [{ resetBeforeCreate: share }, LOST_ANSWERS] },
    { durationMs: ms, rules: [{ rateLimited: share, retryAfter: 2, retryAfterIn: 'body' }, { latencyMs: 250 }, LOST_ANSWERS] },
    { durationMs: ms, rules: [{ serverError: share, serverStatus: 503, html: true }, LOST_ANSWERS] },
    { durationMs: ms, rules: [LOST_ANSWERS] },
  ];
}

/**
 * Every fault kind at once, for the short profile: the n-th request meets the same fault
 * in every run with the same seed (fake/faults.mjs), so a short campaign is sure to meet
 * each kind; with seed 1 the first 14 requests meet all five.
 */
export const MIXED_FAULTS: FaultWave[] = [
  {
    rules: [
      { serverError: 0.12, serverStatus: 502, latencyMs: 50 },
      { rateLimited: 0.12, retryAfter: 1, retryAfterIn: 'header' },
      { resetBeforeCreate: 0.1 },
      { rateLimited: 0.12, retryAfter: 1, retryAfterIn: 'body' },
      { serverError: 0.08, serverStatus: 503, html: true },
      LOST_ANSWERS,
    ],
  },
];

/** The stress profile's cycle: 4 s waves, a quarter of requests hit. */
export const FAKE_WAVES = fakeWaves(4000, 0.25);

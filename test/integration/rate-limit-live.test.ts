// docs/design.md §5 under the live service's limiter (as reported: 20 requests in any
// 10 s, 100 in any 60 s, and a trip costs a whole minute): the simulator enforces both
// windows with a 60 s lockout and counts every request its limiter refuses, while its
// faults answer 20 % of requests 429 (injected, not trips), 10 % 500 and lose 10 % of
// make_call answers. Thirty simulated minutes of a campaign that wants more requests
// than the limit allows: campaignd must never trip the limiter, finish every lead, and
// call nobody twice.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ORIGIN, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';
import { HarnessClock } from './time-clock.js';

let stack: Stack | null = null;
let harness: HarnessClock | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
  harness?.dispose();
  harness = null;
});

const MINUTE = 60_000;
const RUN_MS = 30 * MINUTE;
// Simulated ms per real ms: 30 simulated minutes in about 30 real seconds.
const SCALE = 60;

describe('rate budget against the live limiter', () => {
  it('30 simulated minutes with 429s, 500s and lost answers: zero limiter trips, every lead final, nobody called twice', async () => {
    const numbers = phoneNumbers(700);
    // The engine's own work (SQLite runs in this process) counts as at most 5 ms per stall:
    // on a plain scaled clock a loaded machine's slowness was simulated minutes in which
    // nothing could be sent, and fewer than 500 calls went out.
    harness = new HarnessClock(SCALE, DEFAULT_ORIGIN);
    stack = await startStack({
      clock: harness,
      campaigns: [
        {
          // 40 slots of 5–40 s calls want ~150 make_call a minute: the budget, not the slots, sets the pace.
          settings: { maxCallsInParallel: 40, maxRetries: 1, retryIntervalSeconds: 120 },
          leads: numbers.map((phone) => ({ phone })),
        },
      ],
      callDurationSeconds: { min: 5, max: 40 },
      // Polling alone learns the outcomes: every request counts against the limit.
      webhooks: false,
      rateLimit: { perMinute: 100, burst: 20, burstWindowSeconds: 10, lockoutSeconds: 60 },
      // The client runs on its defaults (100 in any 60 s, 20 in any 10 s). On this clock a
      // real millisecond of event-loop delay between the budget's grant and the
      // simulator's count is 60 simulated ones: only counting each request until its
      // answer is in (rate-budget.ts) keeps the windows true whatever the delay.
      faults: [
        { rate_limited: 0.2, retry_after: 2 },
        { server_error: 0.1, server_status: 500 },
        { path: '/api/user/make_call', drop_after_create: 0.1 },
      ],
    });
    const s = stack;
    const started = s.clock.now();
    // 30 real s on a quiet machine; a loaded one slows this clock down.
    await waitUntil(() => s.clock.now() - started >= RUN_MS, { timeoutMs: 100_000, message: '30 simulated minutes' });
    // Dialing went on the whole time (the campaign is larger than 30 minutes of budget)…
    const placedEarly = s.simCalls().length;
    expect(placedEarly).toBeGreaterThan(500);
    // …then the faults stop, so the last leads finish without waiting for luck.
    await s.control('/__sim/reset-faults');
    await s.waitForQuiet(60_000);

    const limiter = s.sim.state.rateLimitStats;
    expect(limiter.trips, `limiter trips (${JSON.stringify(limiter)})`).toBe(0);
    expect(limiter.refused).toBe(0);
    // The faults did happen, and the client saw them.
    expect(limiter.injected).toBeGreaterThan(50);
    const statuses = s.requests.map((r) => r.status);
    expect(statuses.filter((x) => x === 429).length).toBe(limiter.injected);
    expect(statuses.filter((x) => x === 500).length).toBeGreaterThan(20);
    expect(s.requests.filter((r) => r.endpoint === 'make_call' && r.kind === 'network').length).toBeGreaterThan(5);
    // The budget counted what went out and what came back 429.
    const budget = s.client.budget.stats();
    expect(budget.granted).toBeGreaterThanOrEqual(s.requests.length);
    expect(budget.rateLimited).toBe(limiter.injected);
    expect(budget.waitedMs).toBeGreaterThan(0);
    // It used the limit rather than idling, though every injected 429 paused all requests
    // for 2 s (about 390 of them): ~73 a minute on a quiet machine.
    expect(limiter.allowed / (RUN_MS / MINUTE)).toBeGreaterThan(50);

    await s.assertAllRules();
  }, 200_000);
});

import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ROOT } from '../helpers/processes.js';
import { ManualClock } from '../../src/time/clock.js';
import { createRateBudget, type BudgetPriority, type RateBudget } from '../../src/service/rate-budget.js';
import { readRateHeaders } from '../../src/service/rate-headers.js';

/** Starts `n` acquisitions and records the clock time at which each is granted. */
function startMany(budget: RateBudget, clock: ManualClock, n: number, priority: BudgetPriority = 'read') {
  const grants: number[] = [];
  const done = Array.from({ length: n }, () => budget.acquire(priority).then(() => void grants.push(clock.now())));
  return { grants, all: Promise.all(done) };
}

/** Largest number of grants inside any half-open window [t, t + width). */
function maxInWindow(times: number[], width: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while ((t[hi] ?? 0) - (t[lo] ?? 0) >= width) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('rate budget: two sliding windows counted on request start', () => {
  it('lets `burst` through at once, then nothing until the oldest leaves the burst window', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10, marginMs: 0 });
    const { grants } = startMany(budget, clock, 25);
    await clock.advance(0);
    expect(grants).toHaveLength(20);
    // A token bucket refilling at 100/min would let one through every 600 ms here.
    await clock.advance(9_999);
    expect(grants).toHaveLength(20);
    await clock.advance(1);
    expect(grants).toHaveLength(25);
    expect(grants.slice(20)).toEqual([10_000, 10_000, 10_000, 10_000, 10_000]);
  });

  it('holds every window `marginMs` longer than the service does', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 2, burstWindowSeconds: 10, marginMs: 750 });
    const { grants } = startMany(budget, clock, 3);
    await clock.advance(10_749);
    expect(grants).toEqual([0, 0]);
    await clock.advance(1);
    expect(grants).toEqual([0, 0, 10_750]);
  });

  it('never lets more than requestsPerMinute start in any 60 s', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20, marginMs: 0 });
    const { grants, all } = startMany(budget, clock, 1000);
    while (grants.length < 1000) await clock.advance(250);
    await all;
    expect(maxInWindow(grants, 60_000)).toBe(100);
    expect(maxInWindow(grants, 10_000)).toBe(20);
    // and it is not needlessly slow: 1000 requests at 100/min take about 10 minutes
    expect(Math.max(...grants)).toBeLessThanOrEqual(10 * 60_000);
  });

  it('reports the time each request waited, and the total', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1, burstWindowSeconds: 1, marginMs: 0 });
    expect(await budget.acquire('read')).toBe(0);
    const second = budget.acquire('read');
    const third = budget.acquire('read');
    await clock.advance(2000);
    expect(await second).toBe(1000);
    expect(await third).toBe(2000);
    expect(budget.stats()).toMatchObject({ granted: 3, waiting: 0, waitedMs: 3000 });
  });

  it('keeps a request counted until its answer is in, and a whole window after that', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 2, burstWindowSeconds: 10, marginMs: 0 });
    const first = await budget.acquireGrant('read');
    const second = await budget.acquireGrant('read');
    const { grants } = startMany(budget, clock, 1);
    await clock.advance(20_000);
    // Both still in flight: the service may not even have counted them yet.
    expect(grants).toEqual([]);
    expect(budget.stats()).toMatchObject({ inFlight: 2, inBurstWindow: 2, headroom: 0 });
    budget.settle(first.seq);
    budget.settle(first.seq); // twice is once
    await clock.advance(9_999);
    expect(grants).toEqual([]);
    await clock.advance(1);
    expect(grants).toEqual([30_000]);
    budget.settle(second.seq);
    expect(budget.stats()).toMatchObject({ inFlight: 0, inBurstWindow: 2 });
  });

  it('gives a grant that was never used its place back at once, and does not count it as sent', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 1, marginMs: 0 });
    const unused = await budget.acquireGrant('call');
    const { grants } = startMany(budget, clock, 1);
    await clock.advance(0);
    expect(grants).toEqual([]);
    budget.release(unused.seq);
    await clock.advance(0);
    expect(grants).toEqual([0]);
    expect(budget.stats()).toMatchObject({ granted: 2, sent: 1 });
  });

  it('numbers its grants', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock });
    expect(await budget.acquireGrant('read')).toEqual({ waitedMs: 0, seq: 1 });
    expect(await budget.acquireGrant('call')).toEqual({ waitedMs: 0, seq: 2 });
  });

  it('serves a waiting make_call before waiting reads', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1, burstWindowSeconds: 1, marginMs: 0 });
    await budget.acquire('read');
    const order: string[] = [];
    const reads = [1, 2, 3].map((i) => budget.acquire('read').then(() => void order.push(`read${i}`)));
    const call = budget.acquire('call').then(() => void order.push('call'));
    await clock.advance(1000);
    expect(order).toEqual(['call']);
    await clock.advance(3000);
    await Promise.all([...reads, call]);
    expect(order).toEqual(['call', 'read1', 'read2', 'read3']);
  });

  it('pauses everyone for the wait a 429 names, and counts the 429', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20 });
    budget.pause(7000);
    expect(budget.stats()).toMatchObject({ pausedUntil: 7000, rateLimited: 1, headroom: 0 });
    const { grants } = startMany(budget, clock, 3);
    const { grants: callGrants } = startMany(budget, clock, 1, 'call');
    await clock.advance(6999);
    expect(grants).toHaveLength(0);
    expect(callGrants).toHaveLength(0);
    await clock.advance(1);
    expect(callGrants).toEqual([7000]);
    expect(grants).toEqual([7000, 7000, 7000]);
  });

  it('extends, never shortens, a pause', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock });
    budget.pause(10_000);
    budget.pause(2_000);
    expect(budget.stats()).toMatchObject({ pausedUntil: 10_000, rateLimited: 2 });
  });

  it('drops an aborted waiter and rejects waiters on close', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1, burstWindowSeconds: 1, marginMs: 0 });
    await budget.acquire('read');
    const ac = new AbortController();
    const aborted = budget.acquire('read', ac.signal);
    const next = budget.acquire('read');
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await clock.advance(1000);
    await expect(next).resolves.toBe(1000);
    const last = budget.acquire('call');
    budget.close();
    await expect(last).rejects.toThrow(/closed/);
    await expect(budget.acquire('read')).rejects.toThrow(/closed/);
    expect(clock.pending()).toBe(0);
  });
});

describe('rate budget: headers tighten, never loosen', () => {
  it('allows at most `remaining` more starts until the reset', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, marginMs: 0 });
    const first = await budget.acquireGrant('read');
    budget.tighten(2, 30_000, first.seq);
    expect(budget.headroom()).toBe(2);
    const { grants } = startMany(budget, clock, 4);
    await clock.advance(29_999);
    expect(grants).toEqual([0, 0]);
    await clock.advance(1);
    expect(grants).toEqual([0, 0, 30_000, 30_000]);
  });

  it('counts the requests started after the one whose answer tightened', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, marginMs: 0 });
    const first = await budget.acquireGrant('read');
    await budget.acquire('read');
    await budget.acquire('read');
    // The answer to the first says 3 left: two of them may already be gone.
    budget.tighten(3, 5_000, first.seq);
    expect(budget.headroom()).toBe(1);
  });

  it('keeps the windows when the headers say more is allowed', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 5, marginMs: 0 });
    budget.tighten(99, 60_000);
    const { grants } = startMany(budget, clock, 8);
    await clock.advance(0);
    expect(grants).toHaveLength(5);
  });

  it('ignores a reset already past, and never holds longer than a minute', async () => {
    const clock = new ManualClock(100_000);
    const budget = createRateBudget({ clock, marginMs: 0 });
    budget.tighten(0, 99_000);
    expect(budget.headroom()).toBe(20);
    budget.tighten(0, 100_000 + 3_600_000);
    expect(budget.headroom()).toBe(0);
    const { grants } = startMany(budget, clock, 1);
    await clock.advance(60_000);
    expect(grants).toEqual([160_000]);
  });

  it('tells readers what they may spend without delaying dialing', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20, marginMs: 0 });
    expect(budget.headroom()).toBe(20);
    startMany(budget, clock, 17);
    await clock.advance(0);
    expect(budget.headroom()).toBe(3);
    expect(budget.stats()).toMatchObject({ inBurstWindow: 17, inMinuteWindow: 17, headroom: 3 });
    startMany(budget, clock, 5, 'call');
    await clock.advance(0);
    // 3 of the 5 calls went; 2 wait, and the window is full.
    expect(budget.stats()).toMatchObject({ waiting: 2, headroom: 0 });
    await clock.advance(10_000);
    // the burst window emptied: 20 minus the 2 calls that took their turn
    expect(budget.stats()).toMatchObject({ waiting: 0, inBurstWindow: 2, inMinuteWindow: 22, headroom: 18 });
  });
});

describe('rate budget: handed from one holder to the next (several active instances)', () => {
  it('a second budget seeded with the first one\'s recent requests keeps both windows for the two together', async () => {
    const clock = new ManualClock(0);
    const opts = { clock, requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10, marginMs: 0 };
    const first = createRateBudget(opts);
    // The first holder spends its burst over 5 s, and keeps one request in flight.
    for (let i = 0; i < 19; i++) {
      await first.acquire('call');
      await clock.advance(250);
    }
    const open = await first.acquireGrant('call');
    expect(first.recentAges()).toHaveLength(20);
    expect(first.recentAges()[0]).toBe(0); // the one in flight counts as sent now
    expect(Math.max(...first.recentAges())).toBe(18 * 250 + 250);
    first.settle(open.seq);

    const next = createRateBudget(opts);
    next.seed(first.recentAges());
    // Nothing more may start until the oldest of the first holder's requests leaves the burst window.
    const { grants } = startMany(next, clock, 2, 'call');
    await clock.advance(0);
    expect(grants).toEqual([]);
    await clock.advance(10_000 - 4_750 - 1);
    expect(grants).toEqual([]);
    await clock.advance(1);
    expect(grants).toEqual([10_000]);
    // Unseeded, the same budget would have let the whole burst go at once (the service would refuse them).
    const fresh = createRateBudget(opts);
    expect(fresh.headroom()).toBe(20);
  });

  it('takes requests older than the windows, and nonsense, as nothing', () => {
    const clock = new ManualClock(100_000);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10, marginMs: 0 });
    budget.seed([60_000, 120_000, -5, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(budget.headroom()).toBe(20);
    expect(budget.recentAges()).toEqual([]);
    budget.seed([59_999, 9_999]);
    expect(budget.headroom()).toBe(19);
    expect(budget.recentAges()).toEqual([9_999, 59_999]);
  });

  it('adds to what it counted itself; an account handed on and back is not counted twice', async () => {
    const clock = new ManualClock(0);
    const opts = { clock, requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10, marginMs: 0 };
    const a = createRateBudget(opts);
    // Before it takes the account, A read its assistants once (the campaign sync): still counted after the seed.
    await a.acquire('read');
    a.seed([500, 700]);
    expect(a.recentAges()).toHaveLength(3);
    for (let i = 0; i < 7; i++) await a.acquire('call');
    // A hands the account to B (with its record) and forgets it; B sends 5 more and hands it back.
    const b = createRateBudget(opts);
    b.seed(a.recentAges());
    a.forgetSettled();
    expect(a.recentAges()).toEqual([]);
    await clock.advance(1_000);
    for (let i = 0; i < 5; i++) await b.acquire('call');
    a.seed(b.recentAges());
    b.forgetSettled();
    expect(a.recentAges()).toHaveLength(15);
    expect(a.headroom()).toBe(5);
  });
});

describe('rate budget: property', () => {
  it('in ANY burst window starts (and arrivals) ≤ burst and in ANY 60 s ≤ perMinute, across latency, 429 pauses and header tightening', async () => {
    // A request reaches the service somewhere between its grant and its answer (`latency`
    // later; `at` says where): the service's windows, counted on arrival, must hold too.
    type Step =
      | { kind: 'request'; gap: number; priority: BudgetPriority; latency: number; at: number; withheld: boolean }
      | { kind: 'pause'; gap: number; ms: number }
      | { kind: 'tighten'; gap: number; remaining: number; resetIn: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      { weight: 8, arbitrary: fc.record({
          kind: fc.constant('request' as const),
          gap: fc.integer({ min: 0, max: 3_000 }),
          priority: fc.constantFrom<BudgetPriority>('call', 'read'),
          latency: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20_000 })),
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          withheld: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
        }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('pause' as const), gap: fc.integer({ min: 0, max: 3_000 }), ms: fc.integer({ min: 0, max: 60_000 }) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('tighten' as const), gap: fc.integer({ min: 0, max: 3_000 }), remaining: fc.integer({ min: 0, max: 150 }), resetIn: fc.integer({ min: -5_000, max: 120_000 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 2_000 }),
        async (steps, perMinute, burst, burstWindowSeconds, marginMs) => {
          const clock = new ManualClock(0);
          const budget = createRateBudget({ clock, requestsPerMinute: perMinute, burst, burstWindowSeconds, marginMs });
          const grants: number[] = [];
          const arrivals: number[] = [];
          const pending: Promise<void>[] = [];
          let requests = 0;
          let withheld = 0;
          for (const s of steps) {
            await clock.advance(s.gap);
            if (s.kind === 'request') {
              requests++;
              const granted = budget.acquireGrant(s.priority).then(({ seq }) => {
                const now = clock.now();
                // A withheld request never reaches the service: its place is given back.
                if (s.withheld) return void (budget.release(seq), withheld++);
                grants.push(now);
                arrivals.push(now + Math.floor(s.at * s.latency));
                if (s.latency === 0) budget.settle(seq);
                else clock.setTimer(s.latency, () => budget.settle(seq));
              });
              pending.push(granted);
            } else if (s.kind === 'pause') budget.pause(s.ms);
            else budget.tighten(s.remaining, clock.now() + s.resetIn);
          }
          // Every request is served in the end (nothing starves).
          while (grants.length + withheld < requests) await clock.advance(60_000);
          await Promise.all(pending);
          expect(maxInWindow(grants, 60_000 + marginMs)).toBeLessThanOrEqual(perMinute);
          expect(maxInWindow(grants, burstWindowSeconds * 1000 + marginMs)).toBeLessThanOrEqual(burst);
          expect(maxInWindow(arrivals, 60_000)).toBeLessThanOrEqual(perMinute);
          expect(maxInWindow(arrivals, burstWindowSeconds * 1000)).toBeLessThanOrEqual(burst);
          expect(budget.stats()).toMatchObject({ granted: requests, sent: requests - withheld });
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('X-RateLimit headers', () => {
  const now = Date.UTC(2026, 0, 5, 10, 0, 0);
  it('reads Reset as epoch seconds, epoch milliseconds, or seconds from now', () => {
    expect(readRateHeaders('7', String(now / 1000 + 42), now)).toEqual({ remaining: 7, resetAtMs: now + 42_000 });
    expect(readRateHeaders('7', String(now + 42_000), now)).toEqual({ remaining: 7, resetAtMs: now + 42_000 });
    expect(readRateHeaders('7', '42', now)).toEqual({ remaining: 7, resetAtMs: now + 42_000 });
  });

  it('takes a count without a usable Reset to last the whole minute', () => {
    expect(readRateHeaders('0', undefined, now)).toEqual({ remaining: 0, resetAtMs: now + 60_000 });
    expect(readRateHeaders('3', 'soon', now)).toEqual({ remaining: 3, resetAtMs: now + 60_000 });
  });

  it('ignores a missing or nonsensical Remaining', () => {
    expect(readRateHeaders(undefined, '42', now)).toBeNull();
    expect(readRateHeaders('-1', '42', now)).toBeNull();
    expect(readRateHeaders('lots', '42', now)).toBeNull();
  });
});

describe('rate budget on the real clock', () => {
  it('keeps the process alive while a request waits for its turn', async () => {
    // The only pending work is a request held back by a 429's pause: with nothing else on
    // the event loop, an unref'd wake-up timer let Node end the process with exit 13.
    const script = `
      import { createRateBudget } from './src/service/rate-budget.ts';
      import { systemClock } from './src/time/clock.ts';
      const budget = createRateBudget({ clock: systemClock, requestsPerMinute: 6000, burst: 10 });
      await budget.acquire('read');
      budget.pause(200);
      await budget.acquire('read');
      console.log('granted after the pause');`;
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, timeout: 20_000 }, (err, stdout) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout });
      });
    });
    expect(result).toEqual({ code: 0, stdout: 'granted after the pause\n' });
  });
});

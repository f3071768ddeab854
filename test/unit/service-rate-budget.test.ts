import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ROOT } from '../helpers/processes.js';
import { ManualClock } from '../../src/time/clock.js';
import { createRateBudget, type BudgetPriority } from '../../src/service/rate-budget.js';

/** Starts `n` acquisitions and records the clock time at which each is granted. */
function startMany(budget: ReturnType<typeof createRateBudget>, clock: ManualClock, n: number, priority: BudgetPriority = 'read') {
  const grants: number[] = [];
  const done = Array.from({ length: n }, () => budget.acquire(priority).then(() => void grants.push(clock.now())));
  return { grants, all: Promise.all(done) };
}

/** Largest number of grants inside any half-open window of `width` ms. */
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

describe('rate budget', () => {
  it('lets a burst through at once, then one request per refill interval', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 5 });
    const { grants } = startMany(budget, clock, 8);
    await clock.advance(0);
    expect(grants).toEqual([0, 0, 0, 0, 0]);
    await clock.advance(999);
    expect(grants).toHaveLength(5);
    await clock.advance(1);
    expect(grants).toHaveLength(6);
    await clock.advance(2000);
    expect(grants).toEqual([0, 0, 0, 0, 0, 1000, 2000, 3000]);
    expect(budget.stats()).toMatchObject({ granted: 8, waiting: 0 });
  });

  it('reports the time each request waited', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1 });
    expect(await budget.acquire('read')).toBe(0);
    const second = budget.acquire('read');
    await clock.advance(1000);
    expect(await second).toBe(1000);
  });

  it('never lets more than requestsPerMinute through in any 60 s, nor more than the bucket allows in shorter windows', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20 });
    const { grants, all } = startMany(budget, clock, 1000);
    while (grants.length < 1000) await clock.advance(250);
    await all;
    expect(maxInWindow(grants, 60_000)).toBeLessThanOrEqual(100);
    expect(maxInWindow(grants, 10_000)).toBeLessThanOrEqual(20 + Math.ceil((100 * 10) / 60));
    expect(maxInWindow(grants, 1)).toBeLessThanOrEqual(20);
    // and it is not needlessly slow: 1000 requests at 100/min take about 10 minutes
    expect(Math.max(...grants)).toBeLessThanOrEqual(10 * 60_000 + 1000);
  });

  it('holds for arbitrary arrival patterns (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 150 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 30 }),
        async (gaps, perMinute, burst) => {
          const clock = new ManualClock(0);
          const budget = createRateBudget({ clock, requestsPerMinute: perMinute, burst });
          const grants: number[] = [];
          const pending: Promise<void>[] = [];
          for (const gap of gaps) {
            await clock.advance(gap);
            pending.push(budget.acquire('read').then(() => void grants.push(clock.now())));
          }
          while (grants.length < gaps.length) await clock.advance(60_000);
          await Promise.all(pending);
          expect(maxInWindow(grants, 60_000)).toBeLessThanOrEqual(perMinute);
          expect(maxInWindow(grants, 1)).toBeLessThanOrEqual(burst);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('serves a waiting make_call before waiting reads', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1 });
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

  it('pauses everyone for the wait a 429 names', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 100, burst: 20 });
    budget.pause(7000);
    expect(budget.stats().pausedUntil).toBe(7000);
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
    expect(budget.stats().pausedUntil).toBe(10_000);
  });

  it('drops an aborted waiter and rejects waiters on close', async () => {
    const clock = new ManualClock(0);
    const budget = createRateBudget({ clock, requestsPerMinute: 60, burst: 1 });
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

  it('keeps the process alive while a request waits for its turn on the real clock', async () => {
    // The only pending work is a request held back by a 429's pause: with nothing else on
    // the event loop, an unref'd wake-up timer let Node end the process with exit 13.
    const script = `
      import { createRateBudget } from './src/service/rate-budget.ts';
      import { systemClock } from './src/time/clock.ts';
      const budget = createRateBudget({ clock: systemClock, requestsPerMinute: 6000, burst: 1 });
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

// Rule 6 under the simulator's faults: 429 waves, 5xx waves, a connection dropped after
// the call was created. Every number answers with a success, so "nobody called twice"
// is exactly "one simulator call per number".
import { afterEach, describe, expect, it } from 'vitest';
import { callsByNumber } from '../helpers/invariants.js';
import { allSucceed, isQuiet, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

function expectOneCallEach(s: Stack, numbers: string[]): void {
  const byNumber = callsByNumber(s.simCalls());
  expect([...byNumber.keys()].sort()).toEqual([...numbers].sort());
  for (const n of numbers) expect(byNumber.get(n)?.length, `calls to ${n}`).toBe(1);
}

async function attemptsByState(s: Stack): Promise<Record<string, number>> {
  const rows = await s.db.selectFrom('attempts').select('state').execute();
  const out: Record<string, number> = {};
  for (const r of rows) out[r.state] = (out[r.state] ?? 0) + 1;
  return out;
}

describe('engine: service faults', () => {
  it('429 waves on make_call: attempts go back uncounted after the wait, nobody is called twice', async () => {
    const numbers = phoneNumbers(16);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      faults: [{ path: '/api/user/make_call', rate_limited: 0.5, retry_after: 7 }],
      fixedOutcomes: allSucceed(numbers, 60),
    });
    await waitForWithdrawn(stack, 3);
    // Second wave: a longer wait.
    await stack.control('/__sim/reset-faults');
    await stack.control('/__sim/faults', { path: '/api/user/make_call', rate_limited: 0.6, retry_after: 20 });
    const s = stack;
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', '=', 'withdrawn').execute()).length >= 5 || (await isQuiet(s.db)), {
      message: 'more attempts withdrawn in the second wave',
    });
    await stack.control('/__sim/reset-faults');
    await stack.waitForQuiet();
    await stack.assertAllRules();
    expectOneCallEach(stack, numbers);
    const withdrawn = await stack.db.selectFrom('attempts').selectAll().where('state', '=', 'withdrawn').execute();
    expect(withdrawn.every((a) => a.counted === 0 && a.detail === 'rate limited (429)')).toBe(true);
    // The lead's next attempt waited for the Retry-After of the refusal (7 s or 20 s).
    const all = await stack.db.selectFrom('attempts').selectAll().orderBy('id').execute();
    for (const w of withdrawn) {
      const next = all.find((a) => a.lead_id === w.lead_id && a.id > w.id);
      expect(next, `attempt after ${w.id}`).toBeDefined();
      expect(next!.created_at - w.ended_at!).toBeGreaterThanOrEqual(7_000);
    }
    const leads = await stack.db.selectFrom('leads').select(['state', 'contact_attempts']).execute();
    expect(leads.every((l) => l.state === 'completed' && l.contact_attempts === 1)).toBe(true);
  });

  it("the simulator's own rate limit (every endpoint) never makes a second call", async () => {
    const numbers = phoneNumbers(10, 50);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 5, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      // Three requests per simulated minute at most: the first burst of make_calls alone exceeds it.
      rateLimit: { perMinute: 10, burst: 3, burstWindowSeconds: 60 },
      webhooks: false,
      fixedOutcomes: allSucceed(numbers),
    });
    await stack.waitForQuiet(30_000);
    await stack.assertAllRules();
    expectOneCallEach(stack, numbers);
    expect(stack.requests.filter((r) => r.status === 429).length).toBeGreaterThan(0);
  });

  it('5xx waves on make_call: attempts are unknown, settled from the call list, nobody is called twice', async () => {
    const numbers = phoneNumbers(8);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 4, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      faults: [
        { path: '/api/user/make_call', server_error: 0.5, server_status: 503 },
        { path: '/api/user/calls', server_error: 0.2, server_status: 502 },
      ],
      fixedOutcomes: allSucceed(numbers),
      settleSeconds: 120,
    });
    await stack.waitForQuiet(30_000);
    await stack.assertAllRules();
    expectOneCallEach(stack, numbers);
    const settled = await stack.db.selectFrom('attempts').selectAll().where('state', '=', 'never-placed').execute();
    expect(settled.length).toBeGreaterThan(0);
    for (const a of settled) {
      expect(a.outcome_source).toBe('settle');
      expect(a.counted).toBe(0);
      // Settled no earlier than the settle window after it became unknown.
      expect(a.ended_at! - a.created_at).toBeGreaterThanOrEqual(120_000);
    }
    const unknownEvents = await stack.db.selectFrom('events').select('id').where('kind', '=', 'unknown').execute();
    expect(unknownEvents.length).toBe(settled.length);
  });

  it.each([
    ['polling only', false],
    ['webhooks on', true],
  ])('drop_after_create (%s): the call made before the connection broke is found and not placed again', async (_label, webhooks) => {
    const numbers = phoneNumbers(8, 20);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 4, maxRetries: 2 }, leads: numbers.map((phone) => ({ phone })) }],
      faults: [{ path: '/api/user/make_call', drop_after_create: 0.6 }],
      fixedOutcomes: allSucceed(numbers, 60),
      webhooks,
    });
    await stack.waitForQuiet(30_000);
    await stack.assertAllRules();
    expectOneCallEach(stack, numbers);
    const states = await attemptsByState(stack);
    expect(states).toEqual({ ended: numbers.length });
    const unknownEvents = await stack.db.selectFrom('events').select('id').where('kind', '=', 'unknown').execute();
    expect(unknownEvents.length).toBeGreaterThan(0);
  });
  it('make_call times out: the attempts stay unknown until the settle window has passed, then each number is called once', async () => {
    const numbers = phoneNumbers(4, 60);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      // The service answers make_call after 1.2 real seconds; the client gives up after 0.2 s.
      faults: [{ path: '/api/user/make_call', latency_ms: 1200 }],
      requestTimeoutMs: 200,
      settleSeconds: 120,
      fixedOutcomes: allSucceed(numbers, 30),
      webhooks: false,
    });
    const s = stack;
    await waitUntil(async () => (await s.db.selectFrom('events').select('id').where('kind', '=', 'unknown').execute()).length >= 2, {
      message: 'two make_call requests timed out',
    });
    await s.control('/__sim/reset-faults');
    await s.waitForQuiet(30_000);
    await s.assertAllRules();
    expectOneCallEach(s, numbers);
    const timedOut = await s.db.selectFrom('attempts').selectAll().where('state', '=', 'never-placed').execute();
    expect(timedOut.length).toBeGreaterThanOrEqual(2);
    for (const a of timedOut) expect(a.ended_at! - a.created_at).toBeGreaterThanOrEqual(120_000);
  });
});

async function waitForWithdrawn(s: Stack, n: number): Promise<void> {
  await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', '=', 'withdrawn').execute()).length >= n, {
    message: `${n} attempts withdrawn after 429`,
  });
}

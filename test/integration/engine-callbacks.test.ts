// Callbacks the person asks for (README, "Callbacks the person asks for") through the whole
// stack: the simulator extracts a callback phrase per number (/__sim/extracted), the webhook
// and the call list both report each call, and the lead is called back once per asking call,
// before fresh leads, with the asking call's variables as previous.NAME.
import { afterEach, describe, expect, it } from 'vitest';
import { explainNumber } from '../../src/explain/explain.js';
import { collectStatus } from '../../src/status/collect.js';
import { unconfirmedCountsByCampaign } from '../../src/store/attempts.js';
import { assertAttemptBudget, assertNoOverlapPerNumber, assertParallelLimit } from '../helpers/invariants.js';
import { startStack, waitUntil, type Stack } from '../helpers/stack.js';

const ASKER = '+12025550401';
const FRESH = Array.from({ length: 40 }, (_, i) => `+120255505${String(i).padStart(2, '0')}`);
const HOUR = 3_600_000;

describe('callbacks through the stack', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('schedules one callback per asking call (webhook and call list both report it), before fresh leads, with previous.NAME; max_per_lead refuses the third', async () => {
    stack = await startStack({
      scale: 1500,
      startEngine: false,
      campaigns: [
        {
          name: 'main',
          settings: { callbacks: { variable: 'callback_at', maxPerLead: 2, horizonDays: 30 }, maxCallsInParallel: 1, maxRetries: 0 },
          leads: [ASKER, ...FRESH].map((phone) => ({ phone })),
        },
      ],
      fixedOutcomes: [
        { phone_number: ASKER, status: 'completed', answered_by: 'human', duration: 30 },
        ...FRESH.map((phone) => ({ phone_number: phone, status: 'completed', answered_by: 'human' as const, duration: 600 })),
      ],
    });
    const s = stack;
    await s.control('/__sim/extracted', { phone_number: ASKER, variables: { callback_at: 'in 2 hours', topic: 'pricing' } });
    await s.startEngine();

    const unconfirmed = async () => [...(await unconfirmedCountsByCampaign(s.db, 0)).values()].reduce((a, b) => a + b, 0);
    const final = async () => (await s.db.selectFrom('leads').select('state').execute()).every((r) => !['pending', 'calling', 'retry-scheduled'].includes(r.state));
    await waitUntil(async () => (await final()) && (await unconfirmed()) === 0, { timeoutMs: 60_000, message: async () => JSON.stringify(await s.db.selectFrom('leads').select(['phone_number', 'state', 'state_reason']).execute()) });

    const calls = s.simCalls();
    const asker = calls.filter((c) => c.client_phone_number === ASKER);
    // The first call, a callback two hours after it, one more two hours after that; the third asks again and is refused.
    expect(asker).toHaveLength(3);
    const rows = await s.db.selectFrom('callbacks').selectAll().orderBy('id').execute();
    expect(rows.map((r) => r.state)).toEqual(['placed', 'placed', 'refused']);
    expect(rows[2]!.refused_reason).toBe('max_per_lead reached (2)');
    for (const [i, r] of rows.slice(0, 2).entries()) {
      expect(r.asked).toBe('in 2 hours');
      expect(r.zone).toBe('America/New_York');
      // Two hours after the asking call ended, as its attempt recorded the end.
      const asking = await s.db.selectFrom('attempts').select('ended_at').where('id', '=', r.attempt_id).executeTakeFirstOrThrow();
      expect(Number(r.asked_at) - Number(asking.ended_at)).toBe(2 * HOUR);
      expect(Number(asking.ended_at)).toBeGreaterThanOrEqual(asker[i]!.finishedAt!);
      // Placed at the asked moment or after it, as soon as the one slot frees: at most the
      // fresh call claimed just before the moment (its make_call still on the way) goes first.
      expect(asker[i + 1]!.createdAt).toBeGreaterThanOrEqual(Number(r.asked_at));
      const before = calls.filter((c) => c.client_phone_number !== ASKER && c.createdAt >= Number(r.asked_at) && c.createdAt < asker[i + 1]!.createdAt);
      expect(before.length).toBeLessThanOrEqual(1);
    }
    // Due before fresh leads: fresh leads were still waiting when each callback was placed.
    const fresh = calls.filter((c) => c.client_phone_number !== ASKER);
    for (const cb of asker.slice(1)) expect(fresh.some((c) => c.createdAt > cb.createdAt)).toBe(true);
    // previous.NAME: the callback calls carry the asking call's extracted variables.
    expect(asker[1]!.input_variables).toMatchObject({ name: 'lead 2', 'previous.callback_at': 'in 2 hours', 'previous.topic': 'pricing' });
    expect(asker[0]!.input_variables).not.toHaveProperty('previous.topic');
    // A callback does not use a retry: max_retries 0, and still three calls; the lead ends completed.
    const lead = await s.db.selectFrom('leads').selectAll().where('phone_number', '=', ASKER).executeTakeFirstOrThrow();
    expect(lead).toMatchObject({ state: 'completed', callbacks_given: 2 });
    // Shown: explain lists each asked callback, status counts them per campaign.
    const explained = await explainNumber(s.db, ASKER, s.clock.now(), () => true);
    expect(explained.leads[0]!.callbacks).toMatchObject([
      { attempt_id: Number(rows[0]!.attempt_id), asked: 'in 2 hours', zone: 'America/New_York', state: 'placed', moved_reason: null, callback_attempt_id: Number(rows[1]!.attempt_id) },
      { state: 'placed', callback_attempt_id: Number(rows[2]!.attempt_id) },
      { state: 'refused', refused_reason: 'max_per_lead reached (2)', scheduled_at: null },
    ]);
    expect(explained.leads[0]!.callbacks[0]!.asked_at).toMatch(/^2026-01-05T\d\d:\d\d:\d\d-05:00$/);
    const report = await collectStatus(s.db, { now: s.clock.now(), version: 'test', isPidAlive: () => true });
    expect(report.campaigns[0]!.callbacks).toEqual({ scheduled: 0, placed: 2, refused: 1, dropped: 0 });
    // The dialing rules still hold (a callback lead's extra calls are the callbacks', not retries).
    assertNoOverlapPerNumber(calls);
    assertParallelLimit(calls, 1, 'campaign main');
    assertAttemptBudget(fresh, FRESH, 0);
  }, 90_000);
});

// Account-level conditions through the whole stack: a revoked token, an account the
// service refuses (insufficient balance), a call stuck in progress, and one number in
// two campaigns (rule 3 across campaigns).
import { afterEach, describe, expect, it } from 'vitest';
import { claimAttempts } from '../../src/store/attempts.js';
import { pollOnce } from '../../src/engine/poller.js';
import { assertNoCallsBetween, assertNoOverlapPerNumber, assertParallelLimit, callsByNumber } from '../helpers/invariants.js';
import { pollerDeps, POLLER_OPTIONS } from '../helpers/poller.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/**
 * A stack whose one lead has a call the service keeps in progress, placed by hand outside an
 * engine: make_call answered now, its intent written `intentEarlierMs` before (a wait for the budget).
 */
async function stagePlacedCall(phoneOffset: number, intentEarlierMs = 0): Promise<{ s: Stack; attemptId: number; sentAt: number; answeredAt: number }> {
  const [phone] = phoneNumbers(1, phoneOffset);
  stack = await startStack({
    campaigns: [{ leads: [{ phone: phone! }] }],
    fixedOutcomes: [{ phone_number: phone!, status: 'in-progress' }],
    webhooks: false,
    startEngine: false,
  });
  const s = stack;
  const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id', 'contact_position']).executeTakeFirstOrThrow();
  const answeredAt = s.clock.now();
  const sentAt = answeredAt - intentEarlierMs;
  const [claim] = await claimAttempts(s.db, [
    { campaignId: lead.campaign_id, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone!, assistantId: s.assistantId, owner: 'test', now: sentAt },
  ]);
  if (!claim?.ok) throw new Error('could not stage the attempt');
  await s.client.makeCall({ phone_number: phone!, assistant_id: s.assistantId });
  await s.db.updateTable('attempts').set({ state: 'placed', sent_at: sentAt, answered_at: answeredAt }).where('id', '=', claim.attempt.id).execute();
  return { s, attemptId: claim.attempt.id, sentAt, answeredAt };
}

describe('engine: account conditions', () => {
  it('a revoked token stops dialing (not the engine) and it recovers by itself once the token works again', async () => {
    const numbers = phoneNumbers(6);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 30),
    });
    const s = stack;
    await waitUntil(() => s.simCalls().length >= 2, { message: 'two calls placed' });
    await s.control('/__sim/auth', { user_index: 0, valid: false });
    const revokedAt = s.clock.now();
    await waitUntil(() => s.engine?.status().api === 'token-rejected', { message: 'the engine to see the token rejected' });
    const callsBefore = s.simCalls().length;
    await waitUntil(() => s.clock.now() >= revokedAt + 3 * 60_000, { message: 'three simulated minutes' });
    expect(s.simCalls().length).toBe(callsBefore); // the service refused every make_call meanwhile
    // A refused make_call, or a refused call listing first (then no make_call is refused at all).
    const refused = await s.db.selectFrom('attempts').selectAll().where('state', '=', 'withdrawn').execute();
    expect(refused.every((a) => a.counted === 0)).toBe(true);
    // Dialing stopped: at most one refused make_call per slot, not a hammering loop.
    expect(refused.length).toBeLessThanOrEqual(2);

    await s.control('/__sim/auth', { user_index: 0, valid: true });
    await s.waitForQuiet();
    expect(s.engine?.status().api).toBe('ok');
    await s.assertAllRules();
    for (const n of numbers) expect(callsByNumber(s.simCalls()).get(n)).toHaveLength(1);
  });

  it('insufficient balance (422 without field errors) pauses the account for five minutes; nobody is charged an attempt', async () => {
    const numbers = phoneNumbers(4, 10);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      faults: [{ path: '/api/user/make_call', insufficient_balance: 1 }],
      fixedOutcomes: allSucceed(numbers),
    });
    const s = stack;
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', '=', 'rejected').execute()).length >= 1, {
      message: 'a refused make_call',
    });
    await s.control('/__sim/reset-faults');
    const firstRefusal = await s.db.selectFrom('attempts').select('ended_at').where('state', '=', 'rejected').orderBy('id').executeTakeFirstOrThrow();
    await s.waitForQuiet();
    await s.assertAllRules();
    assertNoCallsBetween(s.simCalls(), 0, firstRefusal.ended_at! + 5 * 60_000, 'account paused after insufficient balance');
    const leads = await s.db.selectFrom('leads').select(['state', 'contact_attempts']).execute();
    expect(leads.every((l) => l.state === 'completed' && l.contact_attempts === 1)).toBe(true);
  });

  it('a call stuck in progress is closed as unknown after max duration + grace: slot freed, not retried', async () => {
    const [stuck, ...others] = phoneNumbers(4, 20);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 2, retryOn: ['busy', 'no-answer', 'failed', 'voicemail'] }, leads: [stuck!, ...others].map((phone) => ({ phone })) }],
      fixedOutcomes: [{ phone_number: stuck!, status: 'in-progress' }, ...allSucceed(others)],
      webhooks: false,
    });
    const s = stack;
    await s.waitForQuiet(30_000);
    const attempt = await s.db.selectFrom('attempts').selectAll().where('phone_number', '=', stuck!).execute();
    expect(attempt).toHaveLength(1);
    expect(attempt[0]).toMatchObject({ state: 'ended', outcome: 'unknown', outcome_source: 'timeout' });
    // The simulator's assistant allows 600 s; the engine's grace is 5 minutes.
    expect(attempt[0]!.ended_at! - attempt[0]!.sent_at!).toBeGreaterThanOrEqual(600_000 + 300_000);
    const lead = await s.db.selectFrom('leads').select('state').where('phone_number', '=', stuck!).executeTakeFirstOrThrow();
    expect(lead.state).toBe('reached-max-retries');
    const calls = s.simCalls();
    expect(callsByNumber(calls).get(stuck!)).toHaveLength(1);
    // The other leads waited for the slot (limit 1) and were called once the stuck call was closed.
    for (const n of others) {
      const c = callsByNumber(calls).get(n)!;
      expect(c).toHaveLength(1);
      expect(c[0]!.createdAt).toBeGreaterThanOrEqual(attempt[0]!.ended_at!);
    }
    assertParallelLimit(calls.filter((c) => c.client_phone_number !== stuck), 1, 'the campaign apart from the stuck call');
  });

  it('a call the listing showed in progress is not closed as stuck because the clock jumped during the listing', async () => {
    // A host or VM suspended while the call list was being read wakes up hours later:
    // what the listing showed was true before the limit, so it proves nothing stuck
    // (the call's webhook may be on its way). The next round, started past the limit, decides.
    const { s, attemptId, sentAt } = await stagePlacedCall(50);

    const maxDuration = 600;
    const limit = sentAt + maxDuration * 1000 + POLLER_OPTIONS.stuckGraceMs;
    let now = limit - 60_000;
    const deps = await pollerDeps(s, { now: () => now, maxDurationSeconds: () => maxDuration });
    const suspendedDuringListing = {
      ...s.engineClient,
      async listCallsSince(...args: Parameters<typeof s.engineClient.listCallsSince>): Promise<void> {
        await s.engineClient.listCallsSince(...args);
        now += 2 * 3_600_000;
      },
    };
    const attemptState = async () => s.db.selectFrom('attempts').select(['state', 'outcome', 'outcome_source']).where('id', '=', attemptId).executeTakeFirstOrThrow();

    expect(await pollOnce({ ...deps, client: suspendedDuringListing }, POLLER_OPTIONS)).toMatchObject({ matched: 1, stuck: 0 });
    expect(await attemptState()).toMatchObject({ state: 'placed' });
    // Seen in progress by a listing that started past the limit: stuck.
    expect(await pollOnce(deps, POLLER_OPTIONS)).toMatchObject({ matched: 1, stuck: 1 });
    expect(await attemptState()).toEqual({ state: 'ended', outcome: 'unknown', outcome_source: 'timeout' });
  });

  it('a call whose make_call waited for the budget is judged stuck from its answer, not from the intent', async () => {
    // The intent row is written at the claim; the request may then wait minutes for the
    // rate budget, and the call only exists from then on.
    const { s, sentAt: claimedAt, answeredAt } = await stagePlacedCall(70, 3 * 60_000);

    const maxDuration = 600;
    let now = claimedAt + maxDuration * 1000 + POLLER_OPTIONS.stuckGraceMs + 60_000; // past the limit counted from the intent
    const deps = await pollerDeps(s, { now: () => now, maxDurationSeconds: () => maxDuration });
    expect(await pollOnce(deps, POLLER_OPTIONS)).toMatchObject({ matched: 1, stuck: 0 });
    now = answeredAt + maxDuration * 1000 + POLLER_OPTIONS.stuckGraceMs + 1; // past the limit counted from the answer
    expect(await pollOnce(deps, POLLER_OPTIONS)).toMatchObject({ matched: 1, stuck: 1 });
  });

  it('a call past its limit is not closed as stuck by a round whose listing failed: only a listing can say it is still in progress', async () => {
    // On a loaded machine (or a flaky network) the listing can fail; closing on the clock
    // alone then lost outcomes whose webhook or next listing would have told them.
    const { s, attemptId, sentAt } = await stagePlacedCall(60);

    const maxDuration = 600;
    const now = sentAt + maxDuration * 1000 + POLLER_OPTIONS.stuckGraceMs + 60_000;
    const deps = await pollerDeps(s, { now: () => now, maxDurationSeconds: () => maxDuration });
    const failing = {
      ...s.engineClient,
      async listCallsSince(): Promise<void> {
        throw Object.assign(new Error('socket hang up'), { kind: 'network' });
      },
    };
    expect(await pollOnce({ ...deps, client: failing }, POLLER_OPTIONS)).toMatchObject({ failed: 1, stuck: 0 });
    const state = async () => (await s.db.selectFrom('attempts').select('state').where('id', '=', attemptId).executeTakeFirstOrThrow()).state;
    expect(await state()).toBe('placed');
    // The next listing shows it still in progress past the limit: now it is stuck.
    expect(await pollOnce(deps, POLLER_OPTIONS)).toMatchObject({ matched: 1, stuck: 1 });
    expect(await state()).toBe('ended');
  });

  it('one number in two campaigns is never called twice at once (rule 3 across campaigns)', async () => {
    const shared = phoneNumbers(3, 30);
    stack = await startStack({
      campaigns: [
        { name: 'first', settings: { maxCallsInParallel: 3, maxRetries: 0 }, leads: shared.map((phone) => ({ phone })) },
        { name: 'second', settings: { maxCallsInParallel: 3, maxRetries: 0 }, leads: shared.map((phone) => ({ phone })) },
      ],
      fixedOutcomes: allSucceed(shared, 90),
    });
    await stack.waitForQuiet(30_000);
    const calls = stack.simCalls();
    assertNoOverlapPerNumber(calls);
    for (const n of shared) expect(callsByNumber(calls).get(n)).toHaveLength(2);
    const states = await stack.db.selectFrom('leads').select('state').execute();
    expect(states.every((l) => l.state === 'completed')).toBe(true);
  });

  it('an assistant the service does not know (404) stops the campaign with a problem; nobody is charged an attempt', async () => {
    const numbers = phoneNumbers(4, 40);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      startEngine: false,
    });
    const s = stack;
    // The simulator's second assistant is inbound: make_call answers 404 "Assistant not found".
    const config = { ...s.campaigns[0]!.config, assistantId: s.assistantId + 1 };
    await s.db.updateTable('campaigns').set({ assistant_id: config.assistantId, config_json: JSON.stringify(config) }).execute();
    await s.startEngine();
    await waitUntil(async () => (await s.db.selectFrom('campaigns').select('problem').executeTakeFirstOrThrow()).problem !== null, {
      message: 'the campaign to get a problem',
    });
    const startedAt = s.clock.now();
    await waitUntil(() => s.clock.now() >= startedAt + 5 * 60_000, { message: 'five simulated minutes' });
    expect(s.simCalls()).toHaveLength(0);
    const row = await s.db.selectFrom('campaigns').select('problem').executeTakeFirstOrThrow();
    expect(row.problem).toMatch(/not found/);
    const attempts = await s.db.selectFrom('attempts').select(['state', 'counted', 'created_at']).execute();
    // At most one refused request per slot, then no more tries: the campaign has its problem
    // before a refused attempt frees its slot, so no pass in between dials it again.
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.length).toBeLessThanOrEqual(2);
    expect(attempts.every((a) => a.state === 'rejected' && a.counted === 0)).toBe(true);
    const leads = await s.db.selectFrom('leads').select(['state', 'contact_attempts']).execute();
    expect(leads.every((l) => (l.state === 'pending' || l.state === 'retry-scheduled') && l.contact_attempts === 0)).toBe(true);
  });
});

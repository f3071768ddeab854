// A lead cancelled while the engine runs (the API's DELETE calls cancelLead), through the
// whole stack: a waiting lead is never called; a lead whose call is live is not cut, the
// call ends, its attempt and result are kept, and the lead stays cancelled although its
// outcome (busy, in retry_on) would have retried it; the campaign then completes.
import { afterEach, describe, expect, it } from 'vitest';
import { cancelLead } from '../../src/store/lead-cancel.js';
import { explainNumber } from '../../src/explain/explain.js';
import { exportResults } from '../../src/results/export.js';
import { collectStatus } from '../../src/status/collect.js';
import { callsByNumber } from '../helpers/invariants.js';
import { phoneNumbers, startStack, waitUntil, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe('engine: cancelled leads', () => {
  it('never calls a cancelled lead, lets a live call finish without retrying it, and completes the campaign', async () => {
    const [live, waiting, other] = phoneNumbers(3);
    stack = await startStack({
      scale: 200,
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 3, retryIntervalSeconds: 60, retryOn: ['busy'] }, leads: [{ phone: live! }, { phone: waiting! }, { phone: other! }] }],
      // 10 simulated minutes (3 s at 200×): long enough to cancel while it is live.
      fixedOutcomes: [
        { phone_number: live!, status: 'busy', duration: 600 },
        { phone_number: other!, status: 'completed', answered_by: 'human', duration: 20 },
      ],
    });
    const s = stack;
    const leadId = async (phone: string) => Number((await s.db.selectFrom('leads').select('id').where('phone_number', '=', phone).executeTakeFirstOrThrow()).id);
    const liveLead = await leadId(live!);
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('state').where('lead_id', '=', liveLead).executeTakeFirst())?.state === 'placed', {
      message: 'the first lead’s call placed',
    });
    const cancelled = await cancelLead(s.db, liveLead, { now: s.clock.now(), reason: 'bought already' });
    expect(cancelled).toMatchObject({ kind: 'cancelled-live-call' });
    // The one slot is held by the live call: the second lead is still waiting.
    expect(await cancelLead(s.db, await leadId(waiting!), { now: s.clock.now() })).toMatchObject({ kind: 'cancelled' });
    await s.waitForQuiet();

    const calls = callsByNumber(s.simCalls());
    expect(calls.get(live!)?.length).toBe(1);
    expect(calls.get(waiting!)).toBeUndefined();
    expect(calls.get(other!)?.length).toBe(1);
    const attempt = await s.db.selectFrom('attempts').select(['id', 'state', 'outcome']).where('lead_id', '=', liveLead).executeTakeFirstOrThrow();
    expect(attempt).toMatchObject({ state: 'ended', outcome: 'busy' });
    const kept = await s.db.selectFrom('call_results').select('attempt_id').where('attempt_id', '=', attempt.id).executeTakeFirst();
    expect(kept).toBeDefined();
    const states = await s.db.selectFrom('leads').select(['phone_number', 'state', 'state_reason']).orderBy('id').execute();
    expect(states).toEqual([
      { phone_number: live, state: 'cancelled', state_reason: 'bought already' },
      { phone_number: waiting, state: 'cancelled', state_reason: 'cancelled' },
      { phone_number: other, state: 'completed', state_reason: null },
    ]);
    const campaign = await s.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow();
    expect(campaign.state).toBe('completed');
    const report = await collectStatus(s.db, { now: s.clock.now(), version: 'test', isPidAlive: () => true });
    expect(report.campaigns[0]!.leads).toMatchObject({ total: 3, cancelled: 2, completed: 1, calling: 0, pending: 0 });
    const why = await explainNumber(s.db, live!, s.clock.now(), () => true);
    expect(why.leads[0]).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(why.leads[0]!.message).toBe('cancelled (bought already): not called again');
    // The results export: the lead's state, and the call the cancelled lead still had.
    let text = '';
    await exportResults(s.db, { format: 'jsonl', scope: {}, campaignNames: new Map([[s.campaigns[0]!.id, s.campaigns[0]!.name]]) }, async (t) => {
      text += t;
    });
    const exported = text.trim().split('\n').map((l) => JSON.parse(l) as { phone_number: string; state: string; attempts: number; last_outcome: string | null });
    expect(exported.map((r) => [r.phone_number, r.state, r.attempts, r.last_outcome])).toEqual([
      [live, 'cancelled', 1, 'busy'],
      [waiting, 'cancelled', 0, null],
      [other, 'completed', 1, 'success'],
    ]);
  });
});

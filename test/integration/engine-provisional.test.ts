// Webhook successes are provisional: the payload has no answered_by, so only the call
// list can say whether a person or a machine answered (a voicemail is retried, rule 5).
// A campaign is complete only once that is known; a daemon stopped for hours still
// checks them after its restart; and a success that no complete listing shows stands.
import { afterEach, describe, expect, it } from 'vitest';
import { claimAttempts } from '../../src/store/attempts.js';
import { pollOnce, PROVISIONAL_PER_ROUND } from '../../src/engine/poller.js';
import { callsByNumber } from '../helpers/invariants.js';
import { pollerDeps, POLLER_OPTIONS } from '../helpers/poller.js';
import { phoneNumbers, startStack, waitUntil, type Stack } from '../helpers/stack.js';
import { capturingLogger } from './client-fixture.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

const HOUR = 3_600_000;
const ALL_HUMAN = { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 };

async function campaignState(s: Stack): Promise<string> {
  return (await s.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow()).state;
}

/**
 * What a daemon stopped long ago left behind: an attempt to `phone` that a webhook ended
 * as a success `agoMs` before now, its lead completed (the engine is not running yet).
 */
async function provisionalSuccess(s: Stack, phone: string, agoMs: number): Promise<number> {
  const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id', 'contact_position']).where('phone_number', '=', phone).executeTakeFirstOrThrow();
  const sentAt = s.clock.now() - agoMs;
  const [claim] = await claimAttempts(s.db, [
    { campaignId: lead.campaign_id, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone, assistantId: s.assistantId, owner: 'stopped-daemon', now: sentAt },
  ]);
  if (!claim?.ok) throw new Error('could not stage the attempt');
  await s.db
    .updateTable('attempts')
    .set({ state: 'placed', call_status: 'completed', outcome: 'success', outcome_source: 'webhook', answered_at: sentAt, ended_at: sentAt + 60_000 })
    .where('id', '=', claim.attempt.id)
    .execute();
  await s.db.updateTable('attempts').set({ state: 'ended' }).where('id', '=', claim.attempt.id).execute();
  await s.db.updateTable('leads').set({ state: 'completed', next_due_at: null, updated_at: sentAt + 60_000 }).where('id', '=', lead.id).execute();
  return claim.attempt.id;
}

describe('engine: provisional webhook successes', () => {
  it('a campaign completes only after the call list said who answered: a webhook "success" that was a machine is retried first', async () => {
    const [phone] = phoneNumbers(1);
    const logs = capturingLogger();
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 1, retryIntervalSeconds: 60 }, leads: [{ phone: phone! }] }],
      outcomes: ALL_HUMAN,
      // The first call is answered by a machine; the webhook says only "completed".
      fixedOutcomes: [{ phone_number: phone!, status: 'completed', answered_by: 'machine', duration: 20, count: 1 }],
      logger: logs.logger,
    });
    await stack.waitForQuiet();
    await waitUntil(async () => (await campaignState(stack!)) === 'completed', { message: 'the campaign to complete' });
    const calls = callsByNumber(stack.simCalls()).get(phone!) ?? [];
    expect(calls.map((c) => c.answered_by)).toEqual(['machine', 'human']);
    const attempts = await stack.db.selectFrom('attempts').select(['outcome', 'outcome_source']).orderBy('id').execute();
    expect(attempts).toEqual([
      { outcome: 'voicemail', outcome_source: 'poll' },
      { outcome: 'success', outcome_source: 'poll' },
    ]);
    const text = logs.lines.join('');
    // Never declared complete while the voicemail was still taken for a success.
    expect(text.match(/campaign completed: every lead is final/g)).toHaveLength(1);
    expect(text).not.toMatch(/campaign has new leads; running again/);
    await stack.assertAllRules();
  });

  it('a webhook success from hours before a restart is still checked: a voicemail is retried', async () => {
    const [phone] = phoneNumbers(1, 10);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 1, retryIntervalSeconds: 60 }, leads: [{ phone: phone! }] }],
      webhooks: false,
      outcomes: ALL_HUMAN,
      fixedOutcomes: [{ phone_number: phone!, status: 'completed', answered_by: 'machine', duration: 20, count: 1 }],
      startEngine: false,
    });
    // The call the stopped daemon placed, 6 hours before this start (in the simulator's record).
    await stack.client.makeCall({ phone_number: phone!, assistant_id: stack.assistantId });
    await waitUntil(() => stack!.simCalls().every((c) => c.finishedAt !== null), { message: 'the first call to end' });
    const first = await provisionalSuccess(stack, phone!, 6 * HOUR);
    await stack.startEngine();
    await stack.waitForQuiet();
    // Confirmed AND bound to its call (the staged attempt had no call id), so that call
    // could not be taken for the retry's.
    const machineCall = stack.simCalls().find((c) => c.answered_by === 'machine');
    expect(await stack.db.selectFrom('attempts').select(['outcome', 'outcome_source', 'answered_by', 'call_id']).where('id', '=', first).executeTakeFirst()).toEqual({
      outcome: 'voicemail',
      outcome_source: 'poll',
      answered_by: 'machine',
      call_id: String(machineCall?.id),
    });
    expect((callsByNumber(stack.simCalls()).get(phone!) ?? []).map((c) => c.answered_by)).toEqual(['machine', 'human']);
    expect(await stack.db.selectFrom('leads').select('state').executeTakeFirst()).toEqual({ state: 'completed' });
  });

  it('a webhook success that a complete call listing does not show stands, and is not looked for again', async () => {
    const [phone] = phoneNumbers(1, 20);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 1 }, leads: [{ phone: phone! }] }],
      webhooks: false,
      startEngine: false,
    });
    // No such call in the service's list (the simulator never made it).
    const id = await provisionalSuccess(stack, phone!, HOUR);
    await stack.startEngine();
    await waitUntil(async () => (await campaignState(stack!)) === 'completed', { message: 'the campaign to complete' });
    expect(await stack.db.selectFrom('attempts').select(['outcome', 'outcome_source']).where('id', '=', id).executeTakeFirst()).toEqual({ outcome: 'success', outcome_source: 'webhook-final' });
    expect(stack.simCalls()).toEqual([]);
    // Nothing left to look for: further rounds list no calls.
    const listed = stack.requests.filter((r) => r.endpoint === 'list_calls').length;
    await stack.clock.sleep(5 * 60_000);
    expect(stack.requests.filter((r) => r.endpoint === 'list_calls').length).toBe(listed);
  });

  it('a backlog of webhook successes is worked through a bounded number per round, newest first', async () => {
    const [phone] = phoneNumbers(1, 30);
    stack = await startStack({ campaigns: [{ leads: [{ phone: phone! }] }], webhooks: false, startEngine: false });
    const s = stack;
    const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id']).executeTakeFirstOrThrow();
    const now = s.clock.now();
    // 1,200 old attempts a webhook ended as successes, none of them in the call list.
    const BACKLOG = 1_200;
    for (let i = 0; i < BACKLOG; i += 400) {
      await s.db
        .insertInto('attempts')
        .values(
          Array.from({ length: 400 }, (_, k) => ({
            campaign_id: lead.campaign_id, lead_id: lead.id, contact_position: 0, phone_number: phone!, assistant_id: s.assistantId,
            state: 'ended' as const, counted: 1, outcome: 'success' as const, outcome_source: 'webhook' as const,
            created_at: now - HOUR - (i + k) * 1_000, sent_at: now - HOUR - (i + k) * 1_000, ended_at: now - HOUR + 60_000 - (i + k) * 1_000,
          })),
        )
        .execute();
    }
    const round = await pollOnce(await pollerDeps(s), POLLER_OPTIONS);
    expect(round.finalised).toBe(PROVISIONAL_PER_ROUND);
    const finalised = await s.db.selectFrom('attempts').select((eb) => [eb.fn.min('ended_at').as('oldest')]).where('outcome_source', '=', 'webhook-final').executeTakeFirstOrThrow();
    const waiting = await s.db.selectFrom('attempts').select((eb) => [eb.fn.max('ended_at').as('newest'), eb.fn.countAll<number>().as('n')]).where('outcome_source', '=', 'webhook').executeTakeFirstOrThrow();
    expect(Number(waiting.n)).toBe(BACKLOG - PROVISIONAL_PER_ROUND);
    // Newest first: everything still waiting ended before everything finalised.
    expect(Number(waiting.newest)).toBeLessThan(Number(finalised.oldest));
  });

  it('the engine works a backlog off round after round, not one bounded round per cadence', async () => {
    const [phone] = phoneNumbers(1, 40);
    // Real time (×1): finalising 1,500 attempts takes real time (a round trip per statement on
    // PostgreSQL: 10 s on a loaded machine), which a fast clock would make look like cadences.
    // One round per cadence takes three cadences (≥ 30 s of this clock) however fast the
    // machine is; back to back, under 25 s even when the machine is loaded.
    stack = await startStack({ campaigns: [{ leads: [{ phone: phone! }] }], webhooks: false, startEngine: false, scale: 1 });
    const s = stack;
    const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id']).executeTakeFirstOrThrow();
    const now = s.clock.now();
    const BACKLOG = 3 * PROVISIONAL_PER_ROUND + 7;
    for (let i = 0; i < BACKLOG; i += 500) {
      await s.db
        .insertInto('attempts')
        .values(
          Array.from({ length: Math.min(500, BACKLOG - i) }, (_, k) => ({
            campaign_id: lead.campaign_id, lead_id: lead.id, contact_position: 0, phone_number: phone!, assistant_id: s.assistantId,
            state: 'ended' as const, counted: 1, outcome: 'success' as const, outcome_source: 'webhook' as const,
            created_at: now - HOUR - (i + k) * 1_000, sent_at: now - HOUR - (i + k) * 1_000, ended_at: now - HOUR + 60_000 - (i + k) * 1_000,
          })),
        )
        .execute();
    }
    const started = s.clock.now();
    await s.startEngine();
    const waiting = async () => Number((await s.db.selectFrom('attempts').select((eb) => eb.fn.countAll<number>().as('n')).where('outcome_source', '=', 'webhook').executeTakeFirstOrThrow()).n);
    await waitUntil(async () => (await waiting()) === 0, { timeoutMs: 60_000, message: 'the backlog to be worked off' });
    // Four rounds back to back, inside the three cadences (10 s or more each) one round per cadence needs.
    expect(s.clock.now() - started).toBeLessThan(25_000);
  });
});

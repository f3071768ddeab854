// cancelLead (src/store/lead-cancel.ts) on SQLite and PostgreSQL: a waiting lead becomes
// `cancelled` at once and is never claimed again; a final lead is left as it is; a lead
// whose call is live is cancelled and says so; a claim racing the cancel either loses
// (no attempt) or wins (its call goes ahead and the lead is still cancelled); what an
// attempt's end does to its lead never moves a cancelled lead again; the lead.final
// hook fires with the state; and the status counts it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimAttempts, markEnded, type ClaimInput } from '../../src/store/attempts.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { cancelLead } from '../../src/store/lead-cancel.js';
import { leadAfterOutcome, leadBackUncounted } from '../../src/store/lead-transitions.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { collectStatus } from '../../src/status/collect.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
let handle: DatabaseHandle;
let campaignId: number;

beforeEach(async () => {
  // Two connections on PostgreSQL, so that a claim and a cancel really run at once.
  handle = await openTestStore({ maxConnections: 2 });
  await migrateToLatest(handle.db, { clock: { now: () => NOW } });
  const row = await upsertCampaign(handle.db, testCampaignConfig('cancels', { maxRetries: 3, retryOn: ['busy'] }), { timezone: 'UTC' }, NOW);
  campaignId = row.id;
});
afterEach(async () => handle.close());

async function* rows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  for (const [i, phone] of phones.entries()) yield { ok: true, line: i + 2, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

function phones(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `+1202555${String(2000 + i)}`);
}

async function importPhones(list: string[]): Promise<Map<string, number>> {
  await importLeads(handle.db, { id: campaignId, allowDuplicates: false }, rows(list), { now: NOW, sourceFile: '/x/cancels.csv' });
  const leads = await handle.db.selectFrom('leads').select(['id', 'phone_number']).where('campaign_id', '=', campaignId).execute();
  return new Map(leads.map((l) => [l.phone_number, l.id]));
}

function claimOf(leadId: number, phone: string): ClaimInput {
  return { campaignId, leadId, contactPosition: 0, phoneNumber: phone, assistantId: 1, owner: 'test', now: NOW + 1 };
}

async function leadOf(id: number) {
  return handle.db.selectFrom('leads').select(['state', 'state_reason', 'next_due_at', 'contact_attempts']).where('id', '=', id).executeTakeFirstOrThrow();
}

describe('cancelLead', () => {
  it('cancels a pending lead at once: final, its reason kept, never claimed afterwards', async () => {
    const [phone] = phones(1);
    const ids = await importPhones([phone!]);
    const id = ids.get(phone!)!;
    expect(await cancelLead(handle.db, id, { now: NOW, reason: 'bought already' })).toEqual({ kind: 'cancelled', campaignId });
    expect(await leadOf(id)).toEqual({ state: 'cancelled', state_reason: 'bought already', next_due_at: null, contact_attempts: 0 });
    const [claim] = await claimAttempts(handle.db, [claimOf(id, phone!)]);
    expect(claim).toEqual({ ok: false, reason: 'lead-not-due' });
    const events = await handle.db.selectFrom('events').select(['kind', 'lead_id']).where('kind', '=', 'cancelled').execute();
    expect(events).toEqual([{ kind: 'cancelled', lead_id: id }]);
  });

  it('leaves a final lead as it is and says which state it has; an unknown id is not found', async () => {
    const [a] = phones(1);
    const id = (await importPhones([a!])).get(a!)!;
    await handle.db.updateTable('leads').set({ state: 'completed' }).where('id', '=', id).execute();
    expect(await cancelLead(handle.db, id, { now: NOW })).toEqual({ kind: 'already-final', state: 'completed' });
    expect((await leadOf(id)).state).toBe('completed');
    await handle.db.updateTable('leads').set({ state: 'retry-scheduled' }).where('id', '=', id).execute();
    expect(await cancelLead(handle.db, id, { now: NOW })).toEqual({ kind: 'cancelled', campaignId });
    expect(await cancelLead(handle.db, id, { now: NOW })).toEqual({ kind: 'already-final', state: 'cancelled' });
    expect(await cancelLead(handle.db, id + 1000, { now: NOW })).toEqual({ kind: 'not-found' });
  });

  it('cancels a lead with a live call; the call ends, its outcome is kept, and the lead stays cancelled', async () => {
    const [a, b] = phones(2);
    const ids = await importPhones([a!, b!]);
    const claims = await claimAttempts(handle.db, [claimOf(ids.get(a!)!, a!), claimOf(ids.get(b!)!, b!)]);
    const [attemptA, attemptB] = claims.map((c) => (c.ok ? c.attempt : null));
    expect(await cancelLead(handle.db, attemptA!.lead_id, { now: NOW + 2 })).toEqual({ kind: 'cancelled-live-call', campaignId, attemptId: attemptA!.id, callId: null });
    expect(await cancelLead(handle.db, attemptB!.lead_id, { now: NOW + 2 })).toMatchObject({ kind: 'cancelled-live-call' });

    // A busy call would be retried (retry_on busy, 3 retries): the retry decision is not applied.
    await handle.db.transaction().execute(async (trx) => {
      expect(await markEnded(trx, attemptA!.id, { callStatus: 'busy', answeredBy: null, outcome: 'busy', source: 'poll', endedAt: NOW + 60_000 })).toBe(true);
      expect(await leadAfterOutcome(trx, attemptA!, () => ({ kind: 'retry', nextDueAt: NOW + 120_000 }), NOW + 60_000)).toBeNull();
      // A call settled as never placed puts its lead back only while it is calling.
      await leadBackUncounted(trx, attemptB!, NOW, 'settled as never placed', NOW + 60_000);
    });
    const attempt = await handle.db.selectFrom('attempts').select(['state', 'outcome', 'call_status']).where('id', '=', attemptA!.id).executeTakeFirstOrThrow();
    expect(attempt).toEqual({ state: 'ended', outcome: 'busy', call_status: 'busy' });
    // A's call was placed and counts; B's was never placed, so its count is taken back.
    expect(await leadOf(attemptA!.lead_id)).toMatchObject({ state: 'cancelled', next_due_at: null, contact_attempts: 1 });
    expect(await leadOf(attemptB!.lead_id)).toMatchObject({ state: 'cancelled', next_due_at: null, contact_attempts: 0 });
  });

  it('against a claim in the same instant: either the claim is refused, or its call goes ahead and the lead ends cancelled', async () => {
    const list = phones(24);
    const ids = await importPhones(list);
    const outcomes = await Promise.all(
      list.map(async (phone, i) => {
        const id = ids.get(phone)!;
        const claim = () => claimAttempts(handle.db, [claimOf(id, phone)]).then((r) => r[0]!);
        const cancel = () => cancelLead(handle.db, id, { now: NOW + 1 });
        // Half start with the claim, half with the cancel.
        const [c, k] = i % 2 === 0 ? await Promise.all([claim(), cancel()]) : await Promise.all([cancel(), claim()]).then(([x, y]) => [y, x] as const);
        return { id, claimed: c.ok, cancel: k.kind };
      }),
    );
    // Both orders happened (each start order wins at least once), so both branches were checked.
    expect(new Set(outcomes.map((o) => o.claimed))).toEqual(new Set([true, false]));
    for (const o of outcomes) {
      // Never a claim after the cancel, never a cancel that missed a live call it raced.
      expect(o.claimed ? 'cancelled-live-call' : 'cancelled').toBe(o.cancel);
      expect((await leadOf(o.id)).state).toBe('cancelled');
      const attempts = await handle.db.selectFrom('attempts').select('state').where('lead_id', '=', o.id).execute();
      expect(attempts.map((a) => a.state)).toEqual(o.claimed ? ['dialing'] : []);
    }
  });

  it('queues lead.final with state cancelled, and status counts cancelled leads as final', async () => {
    await syncHookSubscriptions(handle.db, [{ url: 'http://127.0.0.1:9/hook', events: ['lead.final'] }]);
    const [a, b] = phones(2);
    const ids = await importPhones([a!, b!]);
    await cancelLead(handle.db, ids.get(a!)!, { now: NOW + 5, reason: 'opted for email' });
    const bodies = await handle.db.selectFrom('hook_outbox').select(['type', 'body', 'lead_id']).execute();
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ type: 'lead.final', lead_id: ids.get(a!) });
    expect(JSON.parse(bodies[0]!.body!).data.lead).toMatchObject({ id: ids.get(a!), state: 'cancelled', state_reason: 'opted for email' });
    // Cancelling again is no second final event.
    await cancelLead(handle.db, ids.get(a!)!, { now: NOW + 6 });
    expect(await handle.db.selectFrom('hook_outbox').select('id').execute()).toHaveLength(1);

    const report = await collectStatus(handle.db, { now: NOW + 10, version: 'test', isPidAlive: () => true });
    expect(report.campaigns[0]!.leads).toMatchObject({ total: 2, pending: 1, cancelled: 1 });
  });
});

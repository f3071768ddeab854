// A group-commit batch's webhooks find their attempts in one read (attemptByCallId with the
// batch's call ids, src/store/attempts.ts), on SQLite and PostgreSQL: every item gets the
// attempt it would get alone, a call id the batch's read did not find is looked up alone,
// and a second lookup of one call id in the batch reads the row again. The leads of the
// attempts found are read in the same way, once per batch, for the outcomes' decisions.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLeads } from '../../src/leads/import.js';
import { attemptByCallId, claimAttempts, markEnded, markPlaced } from '../../src/store/attempts.js';
import { leadAfterOutcome, type LeadWithContacts } from '../../src/store/lead-transitions.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { createGroupCommit, type BatchKeys } from '../../src/store/group-commit.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { AttemptRow } from '../../src/store/types.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { phoneRows } from '../helpers/lead-rows.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
const KIND = 'test-call-id';
let handle: DatabaseHandle;

beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => NOW } });
});
afterEach(async () => handle.close());

/** Four attempts of one campaign: three placed as call-1..call-3, the fourth still without a call id. */
async function fourAttempts(): Promise<number[]> {
  const { id } = await upsertCampaign(handle.db, testCampaignConfig('alpha'), { timezone: 'UTC' }, NOW);
  const phones = [0, 1, 2, 3].map((i) => `+1202555100${String(i)}`);
  await importLeads(handle.db, { id, allowDuplicates: false }, phoneRows(phones), { now: NOW, sourceFile: '/x/alpha.csv' });
  const leads = await handle.db.selectFrom('leads').select(['id', 'phone_number']).where('campaign_id', '=', id).orderBy('id').execute();
  const claims = await claimAttempts(handle.db, leads.map((l) => ({ campaignId: id, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'test', now: NOW })));
  const ids = claims.map((c) => (c.ok ? c.attempt.id : -1));
  for (const [i, attemptId] of ids.slice(0, 3).entries()) await markPlaced(handle.db, attemptId, `call-${String(i + 1)}`, NOW + 1_000);
  return ids;
}

describe('attempts by call id, one read per group-commit batch', () => {
  it('gives each item its attempt, reads a call id the batch did not find alone, and hands a row out once', async () => {
    const [a1, a2, a3, a4] = await fourAttempts();
    const commit = createGroupCommit(handle.db);
    const lookup = (callId: string, before?: (trx: Parameters<Parameters<typeof commit.run>[0]>[0]) => Promise<void>) =>
      commit.run(
        async (trx, batch: BatchKeys) => {
          await before?.(trx);
          return attemptByCallId(trx, callId, () => batch.of(KIND));
        },
        { key: { kind: KIND, value: callId } },
      );
    const pick = (row: AttemptRow | undefined) => (row ? { id: Number(row.id), state: row.state, call: row.call_id } : undefined);

    // Queued in one turn: one batch, one transaction.
    const results = await Promise.all([
      lookup('call-1'),
      // Ends call-2's attempt before looking it up: the row comes from the batch's read,
      // made by the first item, so it still says placed (writes are conditional on state).
      lookup('call-2', async (trx) => {
        await markEnded(trx, a2!, { callStatus: 'completed', answeredBy: null, outcome: 'success', source: 'webhook', endedAt: NOW + 5_000 });
      }),
      // Binds call-4 inside the batch, after its read: not in that read, so looked up alone.
      lookup('call-4', async (trx) => {
        await markPlaced(trx, a4!, 'call-4', NOW + 2_000);
      }),
      lookup('call-none'),
      // call-2 a second time: its row was handed out, so this reads it as it is now.
      lookup('call-2'),
      lookup('call-3'),
    ]);
    expect(results.map(pick)).toEqual([
      { id: a1, state: 'placed', call: 'call-1' },
      { id: a2, state: 'placed', call: 'call-2' },
      { id: a4, state: 'placed', call: 'call-4' },
      undefined,
      { id: a2, state: 'ended', call: 'call-2' },
      { id: a3, state: 'placed', call: 'call-3' },
    ]);
    // Outside a transaction, or without the batch's ids, a lookup reads alone.
    expect(pick(await attemptByCallId(handle.db, 'call-2', () => ['call-2']))).toEqual({ id: a2, state: 'ended', call: 'call-2' });
    expect(pick(await attemptByCallId(handle.db, 'call-3'))).toEqual({ id: a3, state: 'placed', call: 'call-3' });
  });

  it('reads the leads of the attempts found with them: each decision gets its lead from that read once, a second one reads it again', async () => {
    const [a1, a2, a3] = await fourAttempts();
    const attempts = await handle.db.selectFrom('attempts').selectAll().where('id', 'in', [a1!, a2!, a3!]).orderBy('id').execute();
    const commit = createGroupCommit(handle.db);
    const seen: { item: string; state: string; reason: string | null }[] = [];
    const decision = (item: string) => (lead: LeadWithContacts) => {
      seen.push({ item, state: lead.state, reason: lead.state_reason });
      return { kind: 'retry' as const, nextDueAt: NOW + 60_000, reason: `retried by ${item}` };
    };
    const outcome = (item: string, callId: string, before?: (trx: Parameters<Parameters<typeof commit.run>[0]>[0]) => Promise<void>) =>
      commit.run(
        async (trx, batch: BatchKeys) => {
          await before?.(trx);
          const attempt = await attemptByCallId(trx, callId, () => batch.of(KIND));
          if (!attempt) throw new Error(`no attempt for ${callId}`);
          await markEnded(trx, attempt.id, { callStatus: 'busy', answeredBy: null, outcome: 'busy', source: 'webhook', endedAt: NOW + 5_000 });
          return (await leadAfterOutcome(trx, attempt, decision(item), NOW + 5_000))?.kind ?? null;
        },
        { key: { kind: KIND, value: callId } },
      );
    const results = await Promise.all([
      outcome('first', 'call-1'),
      // Written behind the decisions' backs after the batch's read: call-3's decision still
      // gets the lead as that read found it, which shows where its row came from.
      outcome('second', 'call-2', async (trx) => {
        await trx.updateTable('leads').set({ state_reason: 'written in between' }).where('id', '=', attempts[2]!.lead_id).execute();
      }),
      outcome('third', 'call-3'),
      // call-1's lead a second time in the batch: read again, as the first decision left it,
      // so it is not decided twice.
      commit.run(async (trx) => (await leadAfterOutcome(trx, attempts[0]!, decision('again'), NOW + 5_000))?.kind ?? null),
    ]);
    expect(results).toEqual(['retry', 'retry', 'retry', null]);
    expect(seen).toEqual([
      { item: 'first', state: 'calling', reason: null },
      { item: 'second', state: 'calling', reason: null },
      { item: 'third', state: 'calling', reason: null },
    ]);
    const leads = await handle.db.selectFrom('leads').select(['id', 'state', 'state_reason']).where('id', 'in', attempts.map((a) => a.lead_id)).orderBy('id').execute();
    expect(leads.map((l) => [l.state, l.state_reason])).toEqual([
      ['retry-scheduled', 'retried by first'],
      ['retry-scheduled', 'retried by second'],
      ['retry-scheduled', 'retried by third'],
    ]);
  });
});

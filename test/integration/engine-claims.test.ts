// claimAttempts (src/store/attempts.ts): a scheduler pass claims many leads in one
// transaction. Checked on real SQLite: results in input order, rule 3 against live calls
// in the store AND within the batch, leads no longer due refused, every claim durable
// before the call returns, and nothing half-claimed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { claimAttempts, type ClaimInput } from '../../src/store/attempts.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';

let handle: DatabaseHandle;
let campaignIds: number[];
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  campaignIds = [];
  // Two campaigns holding the same numbers: rule 3 is across campaigns.
  for (const name of ['north', 'south']) {
    const row = await upsertCampaign(handle.db, campaign(name), { timezone: 'UTC' }, 1_000);
    await importLeads(handle.db, { id: row.id, allowDuplicates: false }, rows(['+4915100000001', '+4915100000002', '+4915100000003']), { now: 1_000, sourceFile: `/x/${name}.csv` });
    campaignIds.push(row.id);
  }
});
afterEach(async () => handle.close());

function campaign(name: string): CampaignConfig {
  return {
    name, file: `/x/${name}.yaml`, assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
    maxCallsInParallel: 10, maxRetries: 0, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: ['busy'], blackoutDates: [],
    initialStatus: 'running', leads: {}, allowDuplicates: false,
  };
}

async function* rows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  for (const [i, phone] of phones.entries()) yield { ok: true, line: i + 2, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

async function input(campaignId: number, phone: string): Promise<ClaimInput> {
  const lead = await handle.db.selectFrom('leads').select(['id', 'contact_position']).where('campaign_id', '=', campaignId).where('phone_number', '=', phone).executeTakeFirstOrThrow();
  return { campaignId, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone, assistantId: 1, owner: 'test', now: 5_000 };
}

describe('claimAttempts', () => {
  it('claims a batch in input order: leads calling, attempts dialing, one row each', async () => {
    const [north] = campaignIds;
    const inputs = await Promise.all(['+4915100000003', '+4915100000001', '+4915100000002'].map((p) => input(north!, p)));
    const results = await claimAttempts(handle.db, inputs);
    expect(results.map((r) => (r.ok ? r.attempt.phone_number : r.reason))).toEqual(['+4915100000003', '+4915100000001', '+4915100000002']);
    for (const [i, r] of results.entries()) {
      expect(r.ok && r.attempt).toMatchObject({ lead_id: inputs[i]!.leadId, state: 'dialing', counted: 1, created_at: 5_000, owner: 'test' });
    }
    const leads = await handle.db.selectFrom('leads').select(['state', 'contact_attempts']).where('campaign_id', '=', north!).execute();
    expect(leads).toEqual(Array.from({ length: 3 }, () => ({ state: 'calling', contact_attempts: 1 })));
  });

  it('refuses a number live in the store and the second lead with one number in the same batch (rule 3)', async () => {
    const [north, south] = campaignIds;
    expect((await claimAttempts(handle.db, [await input(north!, '+4915100000001')]))[0]!.ok).toBe(true);
    const results = await claimAttempts(handle.db, [
      await input(south!, '+4915100000001'), // live since the first claim
      await input(north!, '+4915100000002'),
      await input(south!, '+4915100000002'), // same number, earlier in this batch
      await input(south!, '+4915100000003'),
    ]);
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['phone-live', 'ok', 'phone-live', 'ok']);
    const live = await handle.db.selectFrom('attempts').select('phone_number').where('state', '=', 'dialing').orderBy('phone_number').execute();
    expect(live.map((r) => r.phone_number)).toEqual(['+4915100000001', '+4915100000002', '+4915100000003']);
    // The refused leads were not touched.
    const south1 = await handle.db.selectFrom('leads').select(['state', 'contact_attempts']).where('campaign_id', '=', south!).where('phone_number', 'in', ['+4915100000001', '+4915100000002']).execute();
    expect(south1).toEqual([{ state: 'pending', contact_attempts: 0 }, { state: 'pending', contact_attempts: 0 }]);
  });

  it('refuses a lead no longer due (claimed already, or moved to another contact)', async () => {
    const [north] = campaignIds;
    const first = await input(north!, '+4915100000001');
    await claimAttempts(handle.db, [first]);
    const stale = await input(north!, '+4915100000002');
    const results = await claimAttempts(handle.db, [{ ...first, phoneNumber: '+4915100000009' }, { ...stale, contactPosition: 1 }]);
    expect(results).toEqual([{ ok: false, reason: 'lead-not-due' }, { ok: false, reason: 'lead-not-due' }]);
    expect(await handle.db.selectFrom('attempts').select('id').execute()).toHaveLength(1);
  });

  it('tries a later lead of a number whose earlier lead in the batch was refused, and claims a lead given twice once', async () => {
    const [north, south] = campaignIds;
    const first = await input(north!, '+4915100000001');
    await claimAttempts(handle.db, [first]);
    // north's +…01 lead is calling now: given again (under another number) it is not due.
    const results = await claimAttempts(handle.db, [
      { ...first, phoneNumber: '+4915100000002' },
      await input(south!, '+4915100000002'),
      await input(north!, '+4915100000003'),
      await input(north!, '+4915100000003'),
    ]);
    expect(results.map((r) => (r.ok ? r.attempt.phone_number : r.reason))).toEqual(['lead-not-due', '+4915100000002', '+4915100000003', 'phone-live']);
    const attempts = await handle.db.selectFrom('attempts').select(['lead_id', 'phone_number']).orderBy('id').execute();
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.lead_id)).size).toBe(3);
  });

  it('is one transaction: when the insert fails, no lead of the batch is left calling', async () => {
    const [north] = campaignIds;
    const good = await input(north!, '+4915100000001');
    // A campaign id with no campaign breaks the attempts foreign key at INSERT time, after
    // the UPDATEs of both leads ran: the whole batch must roll back.
    const broken = { ...(await input(north!, '+4915100000002')), campaignId: 424_242 };
    await expect(claimAttempts(handle.db, [good, broken])).rejects.toThrow(/FOREIGN KEY|foreign key/);
    const leads = await handle.db.selectFrom('leads').select(['phone_number', 'state', 'contact_attempts']).where('campaign_id', '=', north!).orderBy('phone_number').execute();
    expect(leads.map((l) => [l.state, l.contact_attempts])).toEqual([['pending', 0], ['pending', 0], ['pending', 0]]);
    expect(await handle.db.selectFrom('attempts').select('id').execute()).toEqual([]);
  });
});

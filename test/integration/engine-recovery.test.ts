// Start-up recovery (src/engine/recovery.ts) on real SQLite: what a killed daemon left
// `dialing` becomes unknown (the call may exist; rule 6), a lead left `calling` without a
// live attempt goes back to the queue, and a lead whose call is live is left alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { claimAttempts } from '../../src/store/attempts.js';
import { recoverUnfinishedAttempts } from '../../src/engine/recovery.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger } from '../../src/log/logger.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';

let handle: DatabaseHandle;
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => handle.close());

const PHONES = ['+4915100000001', '+4915100000002', '+4915100000003'];

const config: CampaignConfig = {
  name: 'north', file: '/x/north.yaml', assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
  maxCallsInParallel: 10, maxRetries: 1, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: ['busy'], blackoutDates: [],
  initialStatus: 'running', leads: {}, allowDuplicates: false,
};

async function* rows(): AsyncGenerator<ReadLeadResult> {
  for (const [i, phone] of PHONES.entries()) yield { ok: true, line: i + 2, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

describe('recoverUnfinishedAttempts', () => {
  it('makes dialing attempts unknown, puts orphaned calling leads back, and leaves live calls alone', async () => {
    const { db } = handle;
    const campaign = await upsertCampaign(db, config, { timezone: 'UTC' }, 1_000);
    await importLeads(db, { id: campaign.id, allowDuplicates: false }, rows(), { now: 1_000, sourceFile: '/x/north.csv' });
    const leads = await db.selectFrom('leads').select(['id', 'phone_number']).orderBy('id').execute();
    const claims = await claimAttempts(
      db,
      leads.map((l) => ({ campaignId: campaign.id, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'dead-daemon', now: 2_000 })),
    );
    const [dialing, placed, orphan] = claims.map((c) => (c.ok ? c.attempt : null));
    // The second call was answered; the third attempt ended but its lead was left `calling`.
    await db.updateTable('attempts').set({ state: 'placed', answered_at: 2_100 }).where('id', '=', placed!.id).execute();
    await db.updateTable('attempts').set({ state: 'ended', outcome: 'busy', ended_at: 2_200 }).where('id', '=', orphan!.id).execute();

    const recovered = await recoverUnfinishedAttempts(db, { now: 10_000, settleMs: 180_000, owner: 'new-daemon', logger: silentLogger() });

    expect(recovered).toBe(1);
    const attempts = await db.selectFrom('attempts').select(['id', 'state', 'settle_deadline', 'owner']).orderBy('id').execute();
    expect(attempts).toEqual([
      { id: dialing!.id, state: 'unknown', settle_deadline: 190_000, owner: 'new-daemon' },
      { id: placed!.id, state: 'placed', settle_deadline: null, owner: 'dead-daemon' },
      { id: orphan!.id, state: 'ended', settle_deadline: null, owner: 'dead-daemon' },
    ]);
    const after = await db.selectFrom('leads').select(['state', 'next_due_at', 'state_reason']).orderBy('id').execute();
    expect(after).toEqual([
      { state: 'calling', next_due_at: 1_000, state_reason: null },
      { state: 'calling', next_due_at: 1_000, state_reason: null },
      { state: 'retry-scheduled', next_due_at: 10_000, state_reason: 'recovered at start-up' },
    ]);
    const events = await db.selectFrom('events').select(['kind', 'attempt_id']).execute();
    expect(events).toEqual([{ kind: 'recovered-unknown', attempt_id: dialing!.id }]);
  });
});

// The store's reads for one engine's dial loop, poller and outcome loop, scoped to its account's
// campaigns (CampaignScope, src/store/attempts.ts), on SQLite and PostgreSQL: another
// account's live, unknown and webhook-success attempts are not read; no scope reads every
// campaign's; an empty scope reads nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { anyUnknownAttempt, claimAttempts, listLiveAttempts, liveCountsByCampaign, markEnded, markPlaced, markUnknown, oldestPlacedAt, unconfirmedAttempts, unconfirmedSummary } from '../../src/store/attempts.js';
import { importLeads } from '../../src/leads/import.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { phoneRows } from '../helpers/lead-rows.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
let handle: DatabaseHandle;

beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => NOW } });
});
afterEach(async () => handle.close());

/** A campaign with three attempts: one placed, one unknown, one ended by a webhook's success. */
async function campaignWithAttempts(name: string, first: number): Promise<number> {
  const { id } = await upsertCampaign(handle.db, testCampaignConfig(name), { timezone: 'UTC' }, NOW);
  const phones = [0, 1, 2].map((i) => `+1202555${String(first + i)}`);
  await importLeads(handle.db, { id, allowDuplicates: false }, phoneRows(phones), { now: NOW, sourceFile: `/x/${name}.csv` });
  const leads = await handle.db.selectFrom('leads').select(['id', 'phone_number']).where('campaign_id', '=', id).orderBy('id').execute();
  const claims = await claimAttempts(handle.db, leads.map((l) => ({ campaignId: id, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'test', now: NOW })));
  const [placed, unknown, ended] = claims.map((c) => (c.ok ? c.attempt.id : -1));
  await markPlaced(handle.db, placed!, `call-${name}-1`, NOW + 1_000);
  await markUnknown(handle.db, unknown!, { detail: 'timeout', settleDeadline: NOW + 60_000 });
  await markPlaced(handle.db, ended!, `call-${name}-3`, NOW + 2_000);
  await markEnded(handle.db, ended!, { callStatus: 'completed', answeredBy: null, outcome: 'success', source: 'webhook', endedAt: NOW + 30_000 });
  return id;
}

describe('attempts read for one account (CampaignScope)', () => {
  it("reads only the scope's campaigns, every campaign without a scope, none with an empty one", async () => {
    const a = await campaignWithAttempts('alpha', 1000);
    const b = await campaignWithAttempts('bravo', 2000);
    const campaignsOf = (list: { campaign_id: number }[]) => [...new Set(list.map((x) => Number(x.campaign_id)))].sort();

    expect(campaignsOf(await listLiveAttempts(handle.db))).toEqual([a, b].sort());
    expect(campaignsOf(await listLiveAttempts(handle.db, [b]))).toEqual([b]);
    expect(await listLiveAttempts(handle.db, [])).toEqual([]);
    // The dial loop's live counts (rule 2): two live attempts each (placed, unknown).
    expect(await liveCountsByCampaign(handle.db)).toEqual(new Map([[a, 2], [b, 2]]));
    expect(await liveCountsByCampaign(handle.db, [b])).toEqual(new Map([[b, 2]]));
    expect(await liveCountsByCampaign(handle.db, [a, b])).toEqual(new Map([[a, 2], [b, 2]]));
    expect(await liveCountsByCampaign(handle.db, [a])).toEqual(new Map([[a, 2]]));
    expect(await liveCountsByCampaign(handle.db, [])).toEqual(new Map());

    expect(campaignsOf(await unconfirmedAttempts(handle.db, 0, 10, [a]))).toEqual([a]);
    expect((await unconfirmedAttempts(handle.db, 0, 10)).length).toBe(2);
    expect(await unconfirmedAttempts(handle.db, 0, 10, [])).toEqual([]);
    expect(await unconfirmedSummary(handle.db, 0, 10, [b])).toEqual({ count: 1, oldestEndedAt: NOW + 30_000 });
    expect((await unconfirmedSummary(handle.db, 0, 10)).count).toBe(2);
    expect(await unconfirmedSummary(handle.db, 0, 10, [])).toEqual({ count: 0, oldestEndedAt: null });

    expect(await anyUnknownAttempt(handle.db, [a])).toBe(true);
    expect(await anyUnknownAttempt(handle.db, [])).toBe(false);
    expect(await oldestPlacedAt(handle.db, [b])).toBe(NOW); // sent_at: written with the claim
    expect(await oldestPlacedAt(handle.db, [])).toBeNull();

    // Campaign a's calls settled: nothing of a is read any more, b's are still there.
    await handle.db.updateTable('attempts').set({ state: 'ended', outcome: 'no-answer', outcome_source: 'poll' }).where('campaign_id', '=', a).execute();
    expect(await anyUnknownAttempt(handle.db, [a])).toBe(false);
    expect(await oldestPlacedAt(handle.db, [a])).toBeNull();
    expect(await listLiveAttempts(handle.db, [a])).toEqual([]);
    expect(await liveCountsByCampaign(handle.db, [a, b])).toEqual(new Map([[b, 2]]));
    expect(await anyUnknownAttempt(handle.db, [b])).toBe(true);
  });
});

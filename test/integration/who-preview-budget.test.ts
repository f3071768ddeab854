// validate --preview for a budgeted campaign (README, "Budgets"): what it spent, what a call
// counts for, what the leads still to call would cost, and whether max_cost covers them.
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { previewCampaigns, renderPreview } from '../../src/explain/preview.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { readGivenCall } from '../../src/results/given.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { mergeCallResult } from '../../src/store/results.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 5, 1, 15, 0, 0);

async function* rows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const p of phones) yield { ok: true, line: ++line, lead: { phoneNumber: p, secondary: [], variables: {} } } as ReadLeadResult;
}

const config = (budget: CampaignConfig['budget']): CampaignConfig => ({
  name: 'b', file: '/b.yaml', assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
  maxCallsInParallel: 3, maxRetries: 0, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: [], blackoutDates: [],
  initialStatus: 'running', leads: {}, allowDuplicates: false, ...(budget ? { budget } : {}),
});

describe('validate --preview: budgets', () => {
  let store: DatabaseHandle | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function campaignWithCalls(costs: number[]): Promise<void> {
    store = await openTestStore();
    const db = store.db;
    await migrateToLatest(db, { clock: new ManualClock(NOW) });
    const row = await upsertCampaign(db, config({ maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.5 }), { timezone: 'UTC' }, NOW);
    const phones = Array.from({ length: 10 }, (_, i) => `+1212555010${i}`);
    await importLeads(db, { id: row.id, allowDuplicates: false }, rows(phones), { now: NOW - 60_000, sourceFile: '/b.csv' });
    const leads = await db.selectFrom('leads').select(['id', 'phone_number']).orderBy('id').execute();
    for (const [i, cost] of costs.entries()) {
      const lead = leads[i]!;
      const t = NOW - 3_600_000;
      await db.updateTable('leads').set({ state: 'completed' }).where('id', '=', lead.id).execute();
      const a = await db.insertInto('attempts').values({ campaign_id: row.id, lead_id: lead.id, contact_position: 0, phone_number: lead.phone_number, assistant_id: 1, state: 'ended', counted: 1, created_at: t, sent_at: t, answered_at: t, ended_at: t + 60_000 }).returning('id').executeTakeFirstOrThrow();
      await mergeCallResult(db, { attemptId: a.id, campaignId: row.id, leadId: lead.id }, readGivenCall({ id: a.id, status: 'completed', cost }, 'UTC').fields, { source: 'poll', now: t, keepTranscripts: false });
    }
  }

  it('says max_cost runs out before the leads do, and what would cover them', async () => {
    await campaignWithCalls([0.2, 0.2, 0.2]);
    const [p] = await previewCampaigns(store!.db, [config({ maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.5 })], NOW);
    expect(p!.budget).toEqual({
      max_cost: 1, max_cost_per_day: null, spent: 0.6, spent_today: 0.6, unpriced_calls: 0, cost_per_call: 0.2, cost_from: 'mean',
      leads_to_call: 7, projected: 1.4, calls_left: 2, paused_now: null, runs_out: true,
    });
    const text = renderPreview([p!]);
    expect(text).toContain('budget: 0.60 spent of max_cost 1.00; 0.20 a call (mean so far)');
    expect(text).toContain('budget: 7 leads still to call ≈ 1.40');
    expect(text).toContain('max_cost leaves room for about 2 more calls: it runs out first and the campaign will show paused (budget); raise max_cost to about 2.00');
  });

  it('judges by the file being validated: a raised max_cost covers them', async () => {
    await campaignWithCalls([0.2, 0.2, 0.2]);
    const [p] = await previewCampaigns(store!.db, [config({ maxCost: 3, maxCostPerDay: null, assumedCostPerCall: 0.5 })], NOW);
    expect(p!.budget).toMatchObject({ calls_left: 12, runs_out: false, paused_now: null });
    expect(renderPreview([p!])).not.toContain('runs out');
  });

  it('before any cost is known, counts the assumed cost and says a cap already reached pauses it now', async () => {
    await campaignWithCalls([]);
    const [fresh] = await previewCampaigns(store!.db, [config({ maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.5 })], NOW);
    expect(fresh!.budget).toMatchObject({ cost_from: 'assumed', cost_per_call: 0.5, leads_to_call: 10, projected: 5, calls_left: 2, runs_out: true });
    expect(renderPreview([fresh!])).toContain('one call at a time until the first arrives');
    await store!.close();
    await campaignWithCalls([0.5, 0.5]);
    const [spent] = await previewCampaigns(store!.db, [config({ maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.5 })], NOW);
    expect(spent!.budget!.paused_now).toMatch(/^budget max_cost 1\.00: 1\.00 spent/);
    expect(renderPreview([spent!])).toContain('budget: paused (budget) now:');
  });
});

// A budget's day and its late costs, as status and the dial loop judge them (README,
// "Budgets"), on SQLite and PostgreSQL: max_cost_per_day counts the calls placed since the
// campaign's own midnight (its zone, a 23-hour DST day included) and lets calls through
// again at its next midnight; a cost the call list brings late is added when it arrives,
// and paused (budget) follows it both ways.
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignBudget, CampaignConfig } from '../../src/config/types.js';
import { readGivenCall } from '../../src/results/given.js';
import { budgetDay } from '../../src/stats/budget.js';
import { collectStatus } from '../../src/status/collect.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { mergeCallResult } from '../../src/store/results.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';
import { explainNumber } from '../../src/explain/explain.js';
import { upsertDaemon } from './status-fixture.js';

let store: DatabaseHandle | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const config = (timezone: string, budget: CampaignBudget): CampaignConfig => ({
  name: 'b', file: '/b.yaml', assistantId: 1, timezone, allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
  maxCallsInParallel: 3, maxRetries: 0, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: [], blackoutDates: [],
  initialStatus: 'running', leads: {}, allowDuplicates: false, budget,
});

let campaignId = 0;
let nextLead = 0;

async function open(timezone: string, budget: CampaignBudget): Promise<void> {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  campaignId = (await upsertCampaign(store.db, config(timezone, budget), { timezone }, 0)).id;
  nextLead = 0;
}

/** One ended call placed at `at`, its result in with this cost (null: the result came without one, the call list brings it later). */
async function call(at: number, cost: number | null): Promise<number> {
  const db = store!.db;
  const phone = `+1212555${String(1000 + ++nextLead)}`;
  const lead = await db.insertInto('leads').values({ campaign_id: campaignId, dedupe_key: phone, phone_number: phone, state: 'completed', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: at, updated_at: at }).returning('id').executeTakeFirstOrThrow();
  const a = await db.insertInto('attempts').values({ campaign_id: campaignId, lead_id: lead.id, contact_position: 0, phone_number: phone, assistant_id: 1, state: 'ended', counted: 1, call_id: `c${nextLead}`, created_at: at, sent_at: at, answered_at: at, ended_at: at + 60_000 }).returning('id').executeTakeFirstOrThrow();
  await price(a.id, lead.id, cost, at + 60_000);
  return a.id;
}

async function price(attemptId: number, leadId: number | null, cost: number | null, now: number): Promise<void> {
  const lead = leadId ?? (await store!.db.selectFrom('attempts').select('lead_id').where('id', '=', attemptId).executeTakeFirstOrThrow()).lead_id;
  await mergeCallResult(store!.db, { attemptId, campaignId, leadId: lead }, readGivenCall({ id: attemptId, status: 'completed', ...(cost === null ? {} : { cost }) }, 'UTC').fields, { source: 'poll', now, keepTranscripts: false });
}

async function budgetAt(now: number) {
  const report = await collectStatus(store!.db, { now, version: 't', isPidAlive: () => true });
  return report.campaigns[0]!.budget!;
}

describe('budgets: the campaign day and late costs', () => {
  it('counts max_cost_per_day from the campaign zone midnight on a DST day, and resumes at the next one', async () => {
    // Berlin springs forward on 2026-03-29: that day runs 2026-03-28T23:00Z to 2026-03-29T22:00Z (23 hours).
    await open('Europe/Berlin', { maxCost: null, maxCostPerDay: 1, assumedCostPerCall: 0.5 });
    await call(Date.parse('2026-03-28T22:30:00Z'), 0.6); // 23:30 on the 28th in Berlin: the day before
    await call(Date.parse('2026-03-28T23:10:00Z'), 0.6); // 00:10 on the 29th in Berlin, still the 28th in UTC
    const lateEvening = Date.parse('2026-03-29T21:30:00Z'); // 23:30 CEST
    expect(budgetDay('Europe/Berlin', lateEvening)).toEqual({ start: Date.parse('2026-03-28T23:00:00Z'), end: Date.parse('2026-03-29T22:00:00Z') });
    // Today in Berlin: 0.60 spent, the next call at the mean 0.60 would make 1.20 > 1.00.
    expect(await budgetAt(lateEvening)).toMatchObject({ spent: 1.2, spent_today: 0.6, paused: true });
    // Midnight in Berlin, an hour before 24 h after the day began: a new day, calls go again.
    expect(await budgetAt(Date.parse('2026-03-29T22:00:00Z'))).toMatchObject({ spent_today: 0, paused: false });
  });

  it('counts the day across midnight in a zone west of UTC', async () => {
    await open('America/New_York', { maxCost: null, maxCostPerDay: 1, assumedCostPerCall: 0.5 });
    await call(Date.parse('2026-11-27T04:30:00Z'), 0.6); // 23:30 on the 26th in New York, the 27th in UTC
    expect(await budgetAt(Date.parse('2026-11-27T04:50:00Z'))).toMatchObject({ spent_today: 0.6, paused: true });
    expect(await budgetAt(Date.parse('2026-11-27T05:00:00Z'))).toMatchObject({ spent_today: 0, paused: false }); // 00:00 in New York
  });

  it('adds a cost that arrives late, and paused (budget) follows it both ways', async () => {
    const now = Date.parse('2026-11-26T15:00:00Z');
    await open('UTC', { maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.5 });
    await call(now - 600_000, 0.4);
    // Ended, its result in but without a cost: it counts at the largest known cost (0.40).
    const late = await call(now - 300_000, null);
    expect(await budgetAt(now)).toMatchObject({ spent: 0.4, paused: true }); // 0.40 + 0.40 + 0.40 > 1.00
    await price(late, null, 0.1, now);
    expect(await budgetAt(now)).toMatchObject({ spent: 0.5, remaining: 0.5, paused: false }); // 0.50 + 0.25 fits
    // Another call ends unpriced, then its cost arrives: spending is what the call list says.
    const third = await call(now - 200_000, null);
    expect(await budgetAt(now)).toMatchObject({ spent: 0.5, paused: true }); // 0.50 + 0.40 + 0.25 > 1.00
    await price(third, null, 0.45, now);
    expect(await budgetAt(now)).toMatchObject({ spent: 0.95, remaining: 0.05, paused: true }); // 0.95 + 0.32 > 1.00
  });

  it('explain says a lead waits for the first price, then that a cap holds it and how to resume', async () => {
    const now = Date.parse('2026-11-26T15:00:00Z');
    await open('UTC', { maxCost: 1, maxCostPerDay: null, assumedCostPerCall: 0.01 });
    await upsertDaemon(store!.db, { instance: 'i', pid: 1, hostname: 'h', heartbeatAt: now });
    const phone = '+12125559999';
    await store!.db.insertInto('leads').values({ campaign_id: campaignId, dedupe_key: phone, phone_number: phone, state: 'pending', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0 }).execute();
    const reasonNow = async () => (await explainNumber(store!.db, phone, now, () => true)).leads[0]!;
    await call(now - 60_000, null); // ended, its cost still to come: no cost known yet
    expect(await reasonNow()).toMatchObject({ reason: 'budget-exhausted', message: expect.stringMatching(/^waiting for a price \(budget\): no call has a known cost yet/) });
    expect(await budgetAt(now)).toMatchObject({ paused: false });
    await call(now - 30_000, 0.95);
    expect((await reasonNow()).message).toMatch(/^paused \(budget\): budget max_cost 1\.00: 0\.95 spent .*raise budget\.max_cost in the campaign file and reload/);
  });
});

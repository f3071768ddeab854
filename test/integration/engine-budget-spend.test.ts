import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrations } from '../../migrations/index.js';
import { mergeCallResult } from '../../src/store/results.js';
import { readGivenCall } from '../../src/results/given.js';
import { budgetSpend, budgetSpendByCampaign } from '../../src/store/budget.js';
import { budgetHold } from '../../src/stats/budget.js';
import { ManualClock } from '../../src/time/clock.js';
import type { AttemptState } from '../../src/store/types.js';

// The spending the dial loop and status read (README, "Budgets"), on SQLite and PostgreSQL.

let store: DatabaseHandle;
const DAY = 86_400_000;
const now = 10 * DAY + 3_600_000;

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  await addCampaign(1);
});

async function addCampaign(id: number): Promise<void> {
  await store.db.insertInto('campaigns').values({ id, name: `c${id}`, state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 9, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
}
afterEach(async () => store.close());

async function attempt(id: number, state: AttemptState, createdAt: number, cost?: number | null, campaignId = 1): Promise<void> {
  const phone = `+4915112345${String(id).padStart(4, '0')}`;
  await store.db.insertInto('leads').values({ id, campaign_id: campaignId, dedupe_key: phone, phone_number: phone, state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0 }).execute();
  await store.db.insertInto('attempts').values({ id, campaign_id: campaignId, lead_id: id, contact_position: 0, phone_number: phone, assistant_id: 1, state, call_id: String(id), call_status: null, answered_by: null, outcome: null, detail: null, outcome_source: null, created_at: createdAt, sent_at: createdAt, answered_at: null, ended_at: null, settle_deadline: null, owner: null }).execute();
  if (cost !== undefined) {
    await price(id, campaignId, cost, 'webhook', createdAt);
  }
}

/** What a source says of attempt `id`'s call: its cost, or none yet. */
async function price(id: number, campaignId: number, cost: number | null, source: 'webhook' | 'poll', at: number): Promise<void> {
  await mergeCallResult(store.db, { attemptId: id, campaignId, leadId: id }, readGivenCall({ id, status: 'completed', cost }, 'UTC').fields, { source, now: at, keepTranscripts: false });
}

/** The spending summed from every call result, as it was read before the database kept the sums. */
async function summedFromResults(campaignId: number, dayStart: number): Promise<{ spent: number; costed: number; spentToday: number; largest: number }> {
  const rows = await store.db.selectFrom('call_results as r').innerJoin('attempts as a', 'a.id', 'r.attempt_id').select(['r.cost', 'a.created_at']).where('r.campaign_id', '=', campaignId).where('r.cost', 'is not', null).execute();
  const costs = rows.map((r) => Number(r.cost));
  return {
    spent: costs.reduce((a, b) => a + b, 0),
    costed: costs.length,
    spentToday: rows.filter((r) => Number(r.created_at) >= dayStart).reduce((a, r) => a + Number(r.cost), 0),
    largest: Math.max(0, ...costs),
  };
}

const near = <T extends { spent: number; spentToday: number }>(x: T): T => ({ ...x, spent: Math.round(x.spent * 1e6), spentToday: Math.round(x.spentToday * 1e6) });

describe('budget spending', () => {
  it('adds known costs, today from local midnight, and counts live, unknown and unpriced calls as pending', async () => {
    await attempt(1, 'ended', 9 * DAY, 2.5); // yesterday
    await attempt(2, 'ended', 10 * DAY + 60_000, 1.5); // today
    await attempt(3, 'ended', 10 * DAY + 120_000, null); // ended, its cost still to come
    await attempt(4, 'placed', now - 1000);
    await attempt(5, 'unknown', now - 1000); // make_call answer lost
    await attempt(6, 'never-placed', now - 1000);
    const spend = await budgetSpend(store.db, 1, 10 * DAY, now);
    expect(spend).toEqual({ spent: 4, costed: 2, spentToday: 1.5, pending: 3, largest: 2.5 });
    // 4 spent + 3 pending at the largest cost (2.50) + the next at the mean (2.00) = 13.50.
    expect(budgetHold({ maxCost: 13.5, maxCostPerDay: null, assumedCostPerCall: 1 }, spend, 0, 0)).toBeNull();
    expect(budgetHold({ maxCost: 13.49, maxCostPerDay: null, assumedCostPerCall: 1 }, spend, 0, 0)?.cap).toBe('max_cost');
  });

  it('a cost arriving late is added when it arrives', async () => {
    await attempt(1, 'ended', now - 1000, null);
    expect(await budgetSpend(store.db, 1, 10 * DAY, now)).toEqual({ spent: 0, costed: 0, spentToday: 0, pending: 1, largest: 0 });
    await mergeCallResult(store.db, { attemptId: 1, campaignId: 1, leadId: 1 }, readGivenCall({ id: 1, status: 'completed', cost: 0.3 }, 'UTC').fields, { source: 'poll', now, keepTranscripts: false });
    expect(await budgetSpend(store.db, 1, 10 * DAY, now)).toEqual({ spent: 0.3, costed: 1, spentToday: 0.3, pending: 0, largest: 0.3 });
  });

  it('keeps the sums as calls are priced: the same as summing every result, whatever the order, the source or the repeats', async () => {
    await addCampaign(2);
    // Kathmandu's midnight is at 18:15 UTC: a day that starts on a quarter hour, not an hour.
    const dayStart = 10 * DAY - 5.75 * 3_600_000;
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const unpriced: number[] = [];
    for (let id = 1; id <= 120; id++) {
      const createdAt = dayStart - 2 * 3_600_000 + Math.floor(random() * 8 * 3_600_000);
      const campaignId = id % 3 === 0 ? 2 : 1;
      const cost = random() < 0.3 ? null : Math.round(random() * 300) / 100;
      await attempt(id, 'ended', createdAt, cost, campaignId);
      if (cost === null) unpriced.push(id);
      // The other source repeats what is known: nothing is counted twice.
      else if (random() < 0.5) await price(id, campaignId, Math.round(random() * 300) / 100, 'poll', createdAt + 60_000);
    }
    // Costs that arrive late, some from a second source after a first without one.
    for (const id of unpriced.slice(0, unpriced.length / 2)) await price(id, id % 3 === 0 ? 2 : 1, 0.07, 'poll', now);
    for (const campaignId of [1, 2]) {
      const spend = await budgetSpend(store.db, campaignId, dayStart, now);
      expect(near(spend)).toEqual(near({ ...(await summedFromResults(campaignId, dayStart)), pending: spend.pending }));
      expect(spend.costed).toBeGreaterThan(10);
      expect(spend.spentToday).toBeGreaterThan(0);
      expect(spend.spentToday).toBeLessThan(spend.spent);
    }
    // A deleted campaign leaves no sums behind.
    await store.db.deleteFrom('call_results').where('campaign_id', '=', 2).execute();
    await store.db.deleteFrom('attempts').where('campaign_id', '=', 2).execute();
    await store.db.deleteFrom('leads').where('campaign_id', '=', 2).execute();
    await store.db.deleteFrom('campaigns').where('id', '=', 2).execute();
    expect(await store.db.selectFrom('campaign_spend').select('bucket').where('campaign_id', '=', 2).execute()).toEqual([]);
  });

  it('reads several campaigns with their own midnights in one statement, each as read alone', async () => {
    await addCampaign(2);
    await addCampaign(3);
    // Campaign 1 at UTC midnight, 2 at Kathmandu's (18:15 UTC the day before), 3 with nothing.
    const days = new Map([[1, 10 * DAY], [2, 10 * DAY - 5.75 * 3_600_000], [3, 10 * DAY]]);
    await attempt(1, 'ended', 9 * DAY, 2.5);
    await attempt(2, 'ended', 10 * DAY + 60_000, 1.5);
    await attempt(3, 'placed', now - 1000);
    await attempt(4, 'ended', 10 * DAY - 3_600_000, 0.75, 2); // before 1's midnight, after 2's
    await attempt(5, 'ended', 9 * DAY, 4, 2); // yesterday for both
    await attempt(6, 'ended', now - 2000, null, 2); // its cost still to come
    await attempt(7, 'unknown', now - 1000, undefined, 2);
    let statements = 0;
    // Counted as results come back: a union's arms pass through transformQuery as they are built.
    const counted = store.db.withPlugin({ transformQuery: (a) => a.node, transformResult: async (a) => (statements++, a.result) });
    const all = await budgetSpendByCampaign(counted, [...days].map(([campaignId, dayStart]) => ({ campaignId, dayStart })), now);
    expect(statements).toBe(1);
    expect(all.get(1)).toEqual({ spent: 4, costed: 2, spentToday: 1.5, pending: 1, largest: 2.5 });
    expect(all.get(2)).toEqual({ spent: 4.75, costed: 2, spentToday: 0.75, pending: 2, largest: 4 });
    expect(all.get(3)).toEqual({ spent: 0, costed: 0, spentToday: 0, pending: 0, largest: 0 });
    for (const [campaignId, dayStart] of days) expect(await budgetSpend(store.db, campaignId, dayStart, now)).toEqual(all.get(campaignId));
  });

  it('a store upgraded with calls already priced starts from their sums', async () => {
    await store.close();
    store = await openTestStore();
    const older = Object.fromEntries(Object.entries(migrations).filter(([version]) => version < '0028_campaign_spend'));
    await migrateToLatest(store.db, { clock: new ManualClock(0), migrations: older });
    await addCampaign(1);
    // The rows as the version of before wrote them (today's writer knows columns that store has not yet).
    await attempt(1, 'ended', 9 * DAY);
    await attempt(2, 'ended', 10 * DAY + 60_000);
    await attempt(3, 'ended', 10 * DAY + 120_000);
    for (const [id, cost, at] of [[1, 2.5, 9 * DAY], [2, 1.25, 10 * DAY + 60_000], [3, null, 10 * DAY + 120_000]] as const) {
      await store.db.insertInto('call_results').values({ attempt_id: id, campaign_id: 1, lead_id: id, call_id: String(id), status: 'completed', answered_by: null, duration_seconds: null, started_at: null, ended_at: null, cost, recording_url: null, transcript_json: null, extracted_json: null, evaluation_json: null, source: 'webhook', received_at: at, updated_at: at, erased_at: null }).execute();
    }
    await migrateToLatest(store.db, { clock: new ManualClock(0) });
    expect(await budgetSpend(store.db, 1, 10 * DAY, now)).toEqual({ spent: 3.75, costed: 2, spentToday: 1.25, pending: 1, largest: 2.5 });
    // And the triggers go on from there.
    await price(3, 1, 4, 'poll', now);
    expect(await budgetSpend(store.db, 1, 10 * DAY, now)).toEqual({ spent: 7.75, costed: 3, spentToday: 5.25, pending: 0, largest: 4 });
  });
});

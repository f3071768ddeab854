import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { mergeCallResult } from '../../src/store/results.js';
import { readGivenCall } from '../../src/results/given.js';
import { budgetSpend } from '../../src/store/budget.js';
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
  await store.db.insertInto('campaigns').values({ id: 1, name: 'c', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 9, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
});
afterEach(async () => store.close());

async function attempt(id: number, state: AttemptState, createdAt: number, cost?: number | null): Promise<void> {
  const phone = `+49151123456${String(id).padStart(2, '0')}`;
  await store.db.insertInto('leads').values({ id, campaign_id: 1, dedupe_key: phone, phone_number: phone, state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0 }).execute();
  await store.db.insertInto('attempts').values({ id, campaign_id: 1, lead_id: id, contact_position: 0, phone_number: phone, assistant_id: 1, state, call_id: String(id), call_status: null, answered_by: null, outcome: null, detail: null, outcome_source: null, created_at: createdAt, sent_at: createdAt, answered_at: null, ended_at: null, settle_deadline: null, owner: null }).execute();
  if (cost !== undefined) {
    await mergeCallResult(store.db, { attemptId: id, campaignId: 1, leadId: id }, readGivenCall({ id, status: 'completed', cost }, 'UTC').fields, { source: 'webhook', now: createdAt, keepTranscripts: false });
  }
}

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
});

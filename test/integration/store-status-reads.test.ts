// What `status` reads for many campaigns: a fixed number of grouped statements, however many
// campaigns there are (100 campaigns were ~1,000 statements, most of a small store's report),
// and each campaign's figures the same as when it is asked for alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { collectStatus } from '../../src/status/collect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { ManualClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const HOUR = 3_600_000;
let store: DatabaseHandle;
let nextLead = 1;
let nextAttempt = 1;

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  nextLead = 1;
  nextAttempt = 1;
});
afterEach(async () => store.close());

const variants = [
  { name: 'a', assistantId: 11, weight: 1 },
  { name: 'b', assistantId: 12, weight: 1 },
];

async function addCampaign(id: number, config: CampaignConfig): Promise<void> {
  await store.db
    .insertInto('campaigns')
    .values({ id, name: config.name, state: 'running', assistant_id: 11, timezone: config.timezone, max_calls_in_parallel: 5, remote_campaign_id: null, config_json: JSON.stringify(config), config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null })
    .execute();
}

/** A lead of `campaign` with one call per entry of `calls` (its cost; null: not priced yet; 'live': still running). */
async function addLead(campaign: number, variant: string, state: 'completed' | 'retry-scheduled', calls: readonly (number | null | 'live')[], extracted: Record<string, unknown> | null = null): Promise<void> {
  const leadId = nextLead++;
  const phone = `+49151${String(1_000_000 + leadId)}`;
  await store.db
    .insertInto('leads')
    .values({ id: leadId, campaign_id: campaign, dedupe_key: phone, phone_number: phone, state, state_reason: null, next_due_at: state === 'completed' ? null : NOW, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: NOW - HOUR / 2, variant })
    .execute();
  for (const [i, cost] of calls.entries()) {
    const id = nextAttempt++;
    const created = NOW - (i + 1) * HOUR;
    const live = cost === 'live';
    await store.db
      .insertInto('attempts')
      .values({ id, campaign_id: campaign, lead_id: leadId, contact_position: 0, phone_number: live ? `+1555${id}` : phone, assistant_id: 11, state: live ? 'placed' : 'ended', counted: 1, call_id: String(id), call_status: live ? null : 'completed', answered_by: null, outcome: live ? null : i === 0 ? 'success' : 'busy', detail: null, outcome_source: 'poll', created_at: created, sent_at: created, answered_at: null, ended_at: live ? null : created + 60_000, settle_deadline: null, owner: null })
      .execute();
    if (live) continue;
    await store.db
      .insertInto('call_results')
      .values({ attempt_id: id, campaign_id: campaign, lead_id: leadId, call_id: String(id), status: 'completed', answered_by: null, duration_seconds: 10, started_at: created, ended_at: created, cost, recording_url: null, transcript_json: null, extracted_json: extracted ? JSON.stringify(extracted) : null, evaluation_json: null, source: 'poll', received_at: created, updated_at: created, erased_at: null })
      .execute();
  }
}

/** `count` campaigns with variants and budgets, alternately in Berlin and New York (different midnights), each with its own calls. */
async function campaigns(count: number): Promise<void> {
  for (let c = 1; c <= count; c++) {
    const zone = c % 2 === 0 ? 'America/New_York' : 'Europe/Berlin';
    await addCampaign(c, testCampaignConfig(`c${c}`, { timezone: zone, variants, budget: { maxCost: 100 * c, maxCostPerDay: 10 * c, assumedCostPerCall: 0.5 }, ...(c % 3 === 0 ? { successWhen: { variable: 'interested', values: ['yes'] } } : {}) }));
    for (let i = 0; i < c; i++) await addLead(c, variants[i % 2]!.name, i % 2 === 0 ? 'completed' : 'retry-scheduled', [0.1 * c, i % 3 === 0 ? null : 0.2, ...(i === 0 ? ['live' as const] : [])], { interested: i % 2 === 0 ? 'yes' : 'no' });
  }
}

describe('store: the reads of status over many campaigns', () => {
  it('makes as many statements for 12 campaigns as for 3', async () => {
    const statementsFor = async (): Promise<number> => {
      let n = 0;
      const counted = store.db.withPlugin({ transformQuery: (a) => (n++, a.node), transformResult: async (a) => a.result });
      await collectStatus(counted, { now: NOW, version: 't', isPidAlive: () => false });
      return n;
    };
    await campaigns(3);
    const three = await statementsFor();
    await store.close();
    store = await openTestStore();
    await migrateToLatest(store.db, { clock: new ManualClock(0) });
    nextLead = 1;
    nextAttempt = 1;
    await campaigns(12);
    expect(await statementsFor()).toBe(three);
  });

  it('gives each campaign the figures it has when asked for alone: leads, today, pace, spending and variants', async () => {
    await campaigns(6);
    const opts = { now: NOW, version: 't', isPidAlive: () => false };
    const all = await collectStatus(store.db, opts);
    expect(all.campaigns.map((c) => c.name)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    for (const c of all.campaigns) {
      const alone = (await collectStatus(store.db, { ...opts, campaign: c.name })).campaigns[0]!;
      expect(c).toEqual(alone);
    }
    // Figures worked out by hand for c4 (New York, 4 leads: 2 completed, 2 retry-scheduled).
    const c4 = all.campaigns[3]!;
    // Calls 1 and 2 h ago; the live one 3 h ago (lead 1): New York's day began at 05:00 UTC, all today.
    expect(c4.attempts).toEqual({ total: 9, today: 9 });
    expect(c4.completions_last_hour).toBe(2);
    // Costs: 0.4 × 4 first calls, 0.2 for the second call of leads 2 and 3 (leads 1 and 4: not priced).
    expect(c4.budget).toMatchObject({ max_cost: 400, max_cost_per_day: 40, spent: 2, spent_today: 2, remaining: 398 });
    expect(c4.variants!.map((v) => [v.name, v.leads, v.calls, v.called_leads, v.reached, v.successes])).toEqual([
      ['a', 2, 4, 2, 2, 2],
      ['b', 2, 4, 2, 2, 2],
    ]);
    // c3 counts successes by success_when: its b leads said "no".
    expect(all.campaigns[2]!.variants!.map((v) => [v.name, v.successes])).toEqual([
      ['a', 2],
      ['b', 0],
    ]);
  });
});

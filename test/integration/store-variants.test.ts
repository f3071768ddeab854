// Assistant variants in the store: the first variant written to a lead stays, the pick by
// weight is proportional, and status's figures (with success_when) come out of the rows.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { pickVariant } from '../../src/engine/variant-pick.js';
import { compareGroups, wilsonInterval } from '../../src/stats/proportions.js';
import { collectStatus } from '../../src/status/collect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { settleLeadVariants } from '../../src/store/variants.js';
import { ManualClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';

let store: DatabaseHandle;
const variants = [
  { name: 'a', assistantId: 11, weight: 3 },
  { name: 'b', assistantId: 12, weight: 1 },
  { name: 'c', assistantId: 13, weight: 1 },
];

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
});
afterEach(async () => store.close());

async function addCampaign(config: CampaignConfig): Promise<void> {
  await store.db.insertInto('campaigns').values({ id: 1, name: config.name, state: 'running', assistant_id: 11, timezone: 'UTC', max_calls_in_parallel: 1, remote_campaign_id: null, config_json: JSON.stringify(config), config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
}

async function addLead(id: number, variant: string | null): Promise<void> {
  const phone = `+49151${String(1_000_000 + id)}`;
  await store.db.insertInto('leads').values({ id, campaign_id: 1, dedupe_key: phone, phone_number: phone, state: 'pending', state_reason: null, next_due_at: 0, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0, variant }).execute();
}

let nextAttempt = 1;
async function addCall(leadId: number, outcome: 'success' | 'busy', cost: number, extracted: Record<string, unknown> | null): Promise<void> {
  const id = nextAttempt++;
  await store.db.insertInto('attempts').values({ id, campaign_id: 1, lead_id: leadId, contact_position: 0, phone_number: `+49151${String(1_000_000 + leadId)}`, assistant_id: 11, state: 'ended', counted: 1, call_id: String(id), call_status: 'completed', answered_by: null, outcome, detail: null, outcome_source: 'poll', created_at: 0, sent_at: 0, answered_at: 0, ended_at: 0, settle_deadline: null, owner: null }).execute();
  await store.db.insertInto('call_results').values({ attempt_id: id, campaign_id: 1, lead_id: leadId, call_id: String(id), status: 'completed', answered_by: null, duration_seconds: 10, started_at: 0, ended_at: 0, cost, recording_url: null, transcript_json: null, extracted_json: extracted ? JSON.stringify(extracted) : null, evaluation_json: null, source: 'poll', received_at: 0, updated_at: 0, erased_at: null }).execute();
}

describe('store: assistant variants', () => {
  it('gives leads variants in proportion to the weights (6000 leads, within 2 points)', () => {
    const counts = new Map<string, number>();
    for (let id = 1; id <= 6000; id++) {
      const v = pickVariant(variants, id).name;
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    expect(Math.abs(counts.get('a')! / 6000 - 0.6)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('b')! / 6000 - 0.2)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('c')! / 6000 - 0.2)).toBeLessThan(0.02);
    // The same lead id always gets the same proposal.
    for (let id = 1; id <= 50; id++) expect(pickVariant(variants, id)).toBe(pickVariant(variants, id));
  });

  it('keeps the first stored variant, and replaces one that left the file', async () => {
    await addCampaign(testCampaignConfig('ab', { variants }));
    await addLead(1, null);
    await addLead(2, 'gone');
    expect(await settleLeadVariants(store.db, [{ leadId: 1, variant: 'a' }, { leadId: 2, variant: 'b' }], ['a', 'b', 'c'])).toEqual(new Map([[1, 'a'], [2, 'b']]));
    // Another instance (or new weights) proposing differently changes nothing.
    expect(await settleLeadVariants(store.db, [{ leadId: 1, variant: 'c' }, { leadId: 2, variant: 'c' }], ['a', 'b', 'c'])).toEqual(new Map([[1, 'a'], [2, 'b']]));
  });

  it('settles a pass of 100 leads in one statement, not one per lead or per variant (PostgreSQL: each is a round trip and a commit)', async () => {
    await addCampaign(testCampaignConfig('ab', { variants }));
    for (let id = 1; id <= 100; id++) await addLead(id, id === 7 ? 'b' : null);
    let statements = 0;
    const counted = store.db.withPlugin({ transformQuery: (a) => (statements++, a.node), transformResult: async (a) => a.result });
    const proposals = Array.from({ length: 100 }, (_, i) => ({ leadId: i + 1, variant: pickVariant(variants, i + 1).name }));
    expect(new Set(proposals.map((p) => p.variant)).size).toBe(3);
    const stored = await settleLeadVariants(counted, proposals, ['a', 'b', 'c']);
    expect(statements).toBe(2); // the UPDATE, and the read back of lead 7, which held one already
    // Lead 7 keeps the variant it held; every other lead got its proposal.
    for (const p of proposals) expect(stored.get(p.leadId)).toBe(p.leadId === 7 ? 'b' : p.variant);
    const rows = await store.db.selectFrom('leads').select(['id', 'variant']).orderBy('id').execute();
    expect(rows.map((r) => r.variant)).toEqual(proposals.map((p) => (p.leadId === 7 ? 'b' : p.variant)));

    // Leads that all hold none: the UPDATE alone.
    for (let id = 101; id <= 150; id++) await addLead(id, null);
    statements = 0;
    const fresh = Array.from({ length: 50 }, (_, i) => ({ leadId: 101 + i, variant: pickVariant(variants, 101 + i).name }));
    const given = await settleLeadVariants(counted, fresh, ['a', 'b', 'c']);
    expect(statements).toBe(1);
    for (const p of fresh) expect(given.get(p.leadId)).toBe(p.variant);
  });

  it('counts successes by success_when per lead, with the Wilson interval and the test of the stats module', async () => {
    await addCampaign(testCampaignConfig('ab', { variants: variants.slice(0, 2), successWhen: { variable: 'interested', values: ['yes'] } }));
    // a: 10 leads called; 6 reached, 4 of them say yes (one says " YES " twice: one lead). b: 8 called, 5 reached, 1 yes.
    for (let id = 1; id <= 10; id++) await addLead(id, 'a');
    for (let id = 11; id <= 18; id++) await addLead(id, 'b');
    await addLead(19, 'b'); // given a variant, not yet called
    for (let id = 1; id <= 10; id++) await addCall(id, 'busy', 0.1, null);
    for (let id = 1; id <= 6; id++) await addCall(id, 'success', 1, { interested: id <= 3 ? 'yes' : 'no' });
    await addCall(4, 'success', 1, { interested: ' YES ' });
    await addCall(4, 'success', 1, { interested: 'yes' });
    for (let id = 11; id <= 18; id++) await addCall(id, 'busy', 0.1, null);
    for (let id = 11; id <= 15; id++) await addCall(id, 'success', 2, { interested: id === 11 ? 'Yes' : 'no' });

    const status = await collectStatus(store.db, { now: 0, version: 't', isPidAlive: () => true });
    const c = status.campaigns[0]!;
    const [a, b] = c.variants!;
    expect(a).toMatchObject({ name: 'a', assistant_id: 11, weight: 3, leads: 10, calls: 18, called_leads: 10, reached: 6, successes: 4, success_rate: 0.4, cost: 9, cost_per_success: 2.25 });
    expect(b).toMatchObject({ name: 'b', assistant_id: 12, weight: 1, leads: 9, calls: 13, called_leads: 8, reached: 5, successes: 1, success_rate: 0.125, cost: 10.8, cost_per_success: 10.8 });
    const [lo, hi] = wilsonInterval(4, 10)!;
    expect(a!.interval).toEqual([Math.round(lo * 1e4) / 1e4, Math.round(hi * 1e4) / 1e4]);
    expect(c.variants_p_value).toBeCloseTo(compareGroups([{ successes: 4, n: 10 }, { successes: 1, n: 8 }]).p!, 4);
    expect(c.variants_significant).toBe(false);
  });
});

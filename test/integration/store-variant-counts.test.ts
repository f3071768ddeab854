// The per-variant figures status reads (README, "Assistant variants") are kept by the
// database (migration 0031): after any mix of the writes the engine, an import or an operator
// makes, they equal a recount of the rows, on SQLite and PostgreSQL. So do the successes under
// success_when (0035), judged by the result's writer and again by the config sync when the
// rule changes: where the kept sums vouch for a campaign they equal a full judgment of its
// calls by variableSays, and after a sync they always vouch.
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { readGivenCall } from '../../src/results/given.js';
import { markEnded, markProvisionalConfirmed, markProvisionalVoicemail, transitionAttempt } from '../../src/store/attempts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { deleteLeadsById } from '../../src/store/lead-import.js';
import { moveLead } from '../../src/store/lead-moves.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { mergeCallResult } from '../../src/store/results.js';
import type { Database, OutcomeClass } from '../../src/store/types.js';
import { recountVariantsByCampaign, settleLeadVariants, variantCountsByCampaign, variantExtractedByCampaign, type VariantCounts } from '../../src/store/variants.js';
import { judgeCampaignSuccesses, keptSuccesses, successRuleKey } from '../../src/store/variant-successes.js';
import { variableSays, type VariableRule } from '../../src/store/variable-match.js';
import { collectVariantsByCampaign } from '../../src/status/variants.js';
import type { CampaignConfig } from '../../src/config/types.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';

let store: DatabaseHandle;
const CAMPAIGNS = [1, 2];

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  for (const id of CAMPAIGNS) await addCampaign(id);
});
afterEach(async () => store.close());

async function addCampaign(id: number): Promise<void> {
  await store.db.insertInto('campaigns').values({ id, name: `c${id}`, state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 9, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
}

const phoneOf = (id: number): string => `+49151${String(1_000_000 + id)}`;

let phones = 0;
/** A lead: with this id, or (id null) the next the database gives, as moves and imports take theirs. */
async function addLead(id: number | null, campaignId: number, variant: string | null = null): Promise<void> {
  const phone = phoneOf(id ?? 500 + ++phones);
  await store.db.insertInto('leads').values({ ...(id === null ? {} : { id }), campaign_id: campaignId, dedupe_key: phone, phone_number: phone, state: 'pending', state_reason: null, next_due_at: 0, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0, variant }).execute();
}

async function addAttempt(id: number, leadId: number, campaignId: number, outcome: OutcomeClass | null = null, counted = 1): Promise<void> {
  const { phone_number: phone } = await store.db.selectFrom('leads').select('phone_number').where('id', '=', leadId).executeTakeFirstOrThrow();
  await store.db.insertInto('attempts').values({ id, campaign_id: campaignId, lead_id: leadId, contact_position: 0, phone_number: phone, assistant_id: 1, state: outcome ? 'ended' : 'placed', counted, call_id: String(id), call_status: null, answered_by: null, outcome, detail: null, outcome_source: outcome ? 'poll' : null, created_at: 0, sent_at: 0, answered_at: null, ended_at: null, settle_deadline: null, owner: null }).execute();
}

/**
 * What a source says of attempt `id`'s call: its cost, or none yet (the first known cost is
 * kept), and its extracted variables judged under `rule` (the writer's, maybe not the store's).
 */
async function price(
  attempt: { id: number; campaign_id: number; lead_id: number },
  cost: number | null,
  source: 'webhook' | 'poll' = 'poll',
  said: { extracted?: Record<string, unknown>; rule?: VariableRule } = {},
): Promise<void> {
  const given = readGivenCall({ id: String(attempt.id), status: 'completed', cost, ...(said.extracted ? { extracted_variables: said.extracted } : {}) }, 'UTC').fields;
  await mergeCallResult(store.db, { attemptId: attempt.id, campaignId: attempt.campaign_id, leadId: attempt.lead_id }, given, { source, now: 0, keepTranscripts: false, ...(said.rule ? { successWhen: said.rule } : {}) });
}

/** success_when rules a campaign's file may hold in turn: values compared as trimmed, lower-cased Unicode text. */
const RULES: VariableRule[] = [
  { variable: 'interest', values: ['yes', 'JA'] },
  { variable: 'interest', values: ['Ärger', 'maybe'] },
  { variable: 'mood', values: ['İyi', 'yes'] },
  { variable: 'interest', values: [' Yes ', 'ja'] }, // the first rule again, written otherwise: the same key
];
/** What the assistant extracts: texts in several cases and spaces, a number, nothing, an object. */
const ANSWERS: unknown[] = ['yes', ' YES ', 'Ja', 'ärger ', 'ÄRGER', 'no', 'maybe', 'i̇yi', 'İYI', 42, null, { x: 1 }];

/** The successes per variant of one campaign, judged from every reached call by variableSays: what status showed before 0035. */
async function judgedFromCalls(campaignId: number, rule: VariableRule): Promise<Record<string, number>> {
  const leads = new Map<string, Set<number>>();
  for (const row of (await variantExtractedByCampaign(store.db, [campaignId])).get(campaignId) ?? []) {
    if (!variableSays(rule, JSON.parse(row.extractedJson))) continue;
    leads.set(row.variant, (leads.get(row.variant) ?? new Set()).add(row.leadId));
  }
  return Object.fromEntries([...leads].map(([v, set]) => [v, set.size]).sort());
}

const nonZero = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].filter(([, n]) => n > 0).sort());

/**
 * The kept successes against a full judgment: equal wherever they vouch for a campaign; after
 * a sync (`sync`) they vouch for every campaign. Each variant's judged leads add up to its
 * answered leads, whatever their keys. Returns the campaigns vouched for before the sync.
 */
async function expectSuccessesEqualJudgment(rules: Map<number, VariableRule>, sync: boolean): Promise<number> {
  const db = store.db as Kysely<Database>;
  const sums = await db.selectFrom('variant_successes').select(['campaign_id', 'variant']).select((eb) => eb.fn.sum<number>('leads').as('leads')).groupBy(['campaign_id', 'variant']).execute();
  const answered = await db.selectFrom('variant_counts').select(['campaign_id', 'variant', 'answered_leads']).where('variant', '<>', '').execute();
  for (const a of answered) {
    const s = sums.find((x) => Number(x.campaign_id) === Number(a.campaign_id) && x.variant === a.variant);
    expect({ campaign: Number(a.campaign_id), variant: a.variant, leads: Number(s?.leads ?? 0) }).toEqual({ campaign: Number(a.campaign_id), variant: a.variant, leads: Number(a.answered_leads) });
  }
  let vouched = 0;
  for (const [id, rule] of rules) {
    const full = await judgedFromCalls(id, rule);
    const kept = (await keptSuccesses(store.db, [{ id, key: successRuleKey(rule) }])).get(id);
    if (kept) {
      vouched++;
      expect({ campaign: id, successes: nonZero(kept) }).toEqual({ campaign: id, successes: full });
    }
    // What status shows, kept or judged from the calls: the same figures either way.
    const config = { variants: [{ name: 'a' }, { name: 'b' }, { name: 'c' }], successWhen: rule } as unknown as CampaignConfig;
    const shown = (await collectVariantsByCampaign(store.db, [{ id, config }])).get(id)!;
    expect(Object.fromEntries(shown.variants.filter((v) => v.successes > 0).map((v) => [v.name, v.successes]).sort())).toEqual(full);
    if (!sync) continue;
    await judgeCampaignSuccesses(store.db, id, rule, rule);
    const after = (await keptSuccesses(store.db, [{ id, key: successRuleKey(rule) }])).get(id);
    expect({ campaign: id, successes: after && nonZero(after) }).toEqual({ campaign: id, successes: full });
  }
  return vouched;
}

/** Figures in one order, costs to a millionth (the counters add and take away doubles). */
function normal(byCampaign: Map<number, VariantCounts[]>): Record<number, VariantCounts[]> {
  const out: Record<number, VariantCounts[]> = {};
  for (const [id, list] of byCampaign) {
    // + 0: a sum that went back to zero through doubles may round to -0.
    const kept = list.filter((v) => v.leads > 0).map((v) => ({ ...v, cost: Math.round(v.cost * 1e6) / 1e6 + 0 }));
    if (kept.length > 0) out[id] = kept.sort((a, b) => a.variant.localeCompare(b.variant));
  }
  return out;
}

/** The counters as stored (the table itself, not a function that might recount), and each campaign's '' row the sum of its variants. */
async function expectCountersEqualRecount(): Promise<void> {
  const rows = await (store.db as Kysely<Database>).selectFrom('variant_counts').selectAll().orderBy('campaign_id').orderBy('variant').execute();
  const stored = new Map<number, VariantCounts[]>();
  for (const r of rows.filter((r) => r.variant !== '')) {
    const v = { variant: r.variant, leads: Number(r.leads), calls: Number(r.calls), calledLeads: Number(r.called_leads), reachedLeads: Number(r.reached_leads), cost: Number(r.cost) };
    stored.set(Number(r.campaign_id), [...(stored.get(Number(r.campaign_id)) ?? []), v]);
  }
  const recount = normal(await recountVariantsByCampaign(store.db, CAMPAIGNS));
  expect(normal(stored)).toEqual(recount);
  expect(normal(await variantCountsByCampaign(store.db, CAMPAIGNS))).toEqual(recount);
  for (const total of rows.filter((r) => r.variant === '')) {
    const parts = (recount[Number(total.campaign_id)] ?? []).reduce((s, v) => ({ leads: s.leads + v.leads, calls: s.calls + v.calls, called: s.called + v.calledLeads, reached: s.reached + v.reachedLeads }), { leads: 0, calls: 0, called: 0, reached: 0 });
    expect({ leads: Number(total.leads), calls: Number(total.calls), called: Number(total.called_leads), reached: Number(total.reached_leads) }).toEqual(parts);
  }
}

describe('per-variant counters (migration 0031)', () => {
  it('equal a recount after random claims, outcomes, confirmations, late costs, variant changes, cancels, moves and deletes', async () => {
    let seed = 11;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(random() * list.length)];
    let known = ['a', 'b', 'c'];
    for (let i = 1; i <= 60; i++) await addLead(null, i % 4 === 0 ? 2 : 1);
    let nextAttempt = 1;
    const kinds = new Map<string, number>();
    // Each campaign's success_when as its file says now, and the one before (a writer not yet reloaded).
    const rules = new Map<number, VariableRule>([[1, RULES[0]!], [2, RULES[2]!]]);
    const before = new Map<number, VariableRule>(rules);
    /** What a call's result says: variables most of the time, judged under the writer's rule (mostly the file's). */
    const said = (campaignId: number): { extracted?: Record<string, unknown>; rule?: VariableRule } => {
      // Half the answers one of the file's values, in another case or with spaces around.
      const answer = (): unknown => {
        const value = pick(rules.get(campaignId)!.values)!;
        return random() < 0.5 ? pick(ANSWERS) : random() < 0.5 ? ` ${value.toUpperCase()}` : value.toLowerCase();
      };
      const extracted = random() < 0.8 ? { interest: answer(), ...(random() < 0.5 ? { mood: answer() } : {}) } : undefined;
      const r = random();
      const rule = r < 0.8 ? rules.get(campaignId) : r < 0.9 ? before.get(campaignId) : undefined;
      return { ...(extracted ? { extracted } : {}), ...(rule ? { rule } : {}) };
    };
    let vouched = 0;
    let judgedFromCallsOnly = 0;
    let mostSuccesses = 0;
    for (let step = 0; step < 400; step++) {
      // In id order: a row's place in an unordered scan changes with its updates (on
      // PostgreSQL, with vacuum's timing too), and the seeded picks must take the same rows.
      const leads = await store.db.selectFrom('leads').selectAll().orderBy('id').execute();
      const attempts = await store.db.selectFrom('attempts').selectAll().orderBy('id').execute();
      const live = attempts.filter((a) => a.state === 'placed');
      const idle = leads.filter((l) => !live.some((a) => Number(a.lead_id) === Number(l.id)) && l.state !== 'moved');
      const withResult = await store.db.selectFrom('call_results').select(['attempt_id']).orderBy('attempt_id').execute();
      let roll = random();
      let kind = '';
      if (roll < 0.12) {
        // success_when's own writes: the rule edited in the file (the sync judges again at once,
        // or later), an operator's SQL rewriting a result's variables, retention erasing them.
        const r = random();
        const campaignId = pick(CAMPAIGNS)!;
        if (r < 0.35) {
          kind = 'rule change';
          before.set(campaignId, rules.get(campaignId)!);
          rules.set(campaignId, pick(RULES)!);
          if (random() < 0.5) await judgeCampaignSuccesses(store.db, campaignId, rules.get(campaignId)!, before.get(campaignId));
        } else if (r < 0.55) {
          kind = 'sync';
          await judgeCampaignSuccesses(store.db, campaignId, rules.get(campaignId)!, rules.get(campaignId));
        } else if (r < 0.8) {
          kind = 'operator rewrite';
          const a = pick(withResult);
          if (a) await store.db.updateTable('call_results').set({ extracted_json: JSON.stringify({ interest: pick(ANSWERS) }) }).where('attempt_id', '=', a.attempt_id).execute();
        } else {
          kind = 'erase';
          const a = pick(withResult);
          if (a) await store.db.updateTable('call_results').set({ extracted_json: null, erased_at: 1 }).where('attempt_id', '=', a.attempt_id).execute();
        }
        roll = 2; // nothing else this step
      } else roll = random();
      if (roll > 1) {
        // done above
      } else if (roll < 0.25 && idle.length > 0) {
        // A claim: the lead's variant is settled (written at its first claim), then the attempt.
        kind = 'claim';
        const lead = pick(idle)!;
        await settleLeadVariants(store.db, [{ leadId: Number(lead.id), variant: pick(known)! }], known);
        await addAttempt(nextAttempt++, Number(lead.id), Number(lead.campaign_id));
      } else if (roll < 0.45 && live.length > 0) {
        // An outcome: from the call list (final), or a webhook's success (provisional), with or without its cost yet.
        kind = 'outcome';
        const a = pick(live)!;
        const outcome = pick(['success', 'success', 'success', 'busy', 'no-answer', 'voicemail'] as const)!;
        const provisional = outcome === 'success' && random() < 0.5;
        if (random() < 0.7) await price(a, random() < 0.3 ? null : Math.round(random() * 300) / 100, provisional ? 'webhook' : 'poll', said(Number(a.campaign_id)));
        await markEnded(store.db, Number(a.id), { callStatus: 'completed', answeredBy: null, outcome, source: provisional ? 'webhook' : 'poll', endedAt: 1 });
      } else if (roll < 0.53) {
        // The call list confirms a provisional success, or says it was a machine: the outcome is set again.
        kind = 'confirm';
        const a = pick(attempts.filter((x) => x.outcome_source === 'webhook' && x.outcome === 'success'));
        if (a && random() < 0.5) await markProvisionalConfirmed(store.db, Number(a.id), 'human');
        else if (a) await markProvisionalVoicemail(store.db, Number(a.id), 'machine');
      } else if (roll < 0.63) {
        // A late cost (the first known cost is kept; a second source repeats it), late variables
        // (kept when the first source had none).
        kind = 'late cost';
        const a = pick(attempts.filter((x) => x.state === 'ended'));
        if (a) await price(a, Math.round(random() * 300) / 100, 'poll', said(Number(a.campaign_id)));
      } else if (roll < 0.7 && live.length > 0) {
        // Not placed after all (withdrawn, rejected): ended, not counted.
        kind = 'cancel';
        const a = pick(live)!;
        await transitionAttempt(store.db, Number(a.id), ['placed'], 'withdrawn', { counted: 0, outcome: random() < 0.5 ? 'rejected' : null, ended_at: 1 });
      } else if (roll < 0.75) {
        // A variant removed from the file (or put back): the next claim of its leads moves them, with what they had.
        kind = 'variant change';
        known = known.length === 3 ? ['a', 'b'] : ['a', 'b', 'c'];
        const someLeads = leads.filter(() => random() < 0.4).map((l) => ({ leadId: Number(l.id), variant: pick(known)! }));
        await settleLeadVariants(store.db, someLeads, known);
      } else if (roll < 0.8) {
        // move_to: the lead ends `moved` and the other campaign gets a new lead (no variant yet).
        kind = 'move';
        const lead = pick(leads.filter((l) => l.state !== 'moved' && Number(l.campaign_id) === 1));
        if (lead) {
          await store.db.transaction().execute((trx) => moveLead(trx, lead, { campaign: 'c2', from: 'c1', phone: `+4930${String(9_000_000 + Number(lead.id))}`, extracted: {}, reason: 'rule' }, 1));
        }
      } else if (roll < 0.84) {
        // A lead deleted (its attempts and results go with it).
        kind = 'delete';
        const lead = pick(leads);
        if (lead) await deleteLeadsById(store.db, [Number(lead.id)]);
      } else if (roll < 0.88) {
        // An operator's SQL: every ended call of a lead uncounted at once, or counted again (one statement, several rows).
        kind = 'bulk counted';
        const a = pick(attempts.filter((x) => x.outcome !== null));
        if (a) await store.db.updateTable('attempts').set({ counted: Number(a.counted) === 1 ? 0 : 1 }).where('lead_id', '=', a.lead_id).execute();
      } else if (roll < 0.92) {
        // A lead imported with a variant already (a copied store), or a new lead without one.
        kind = 'import';
        await addLead(null, random() < 0.5 ? 1 : 2, random() < 0.5 ? pick(known)! : null);
      } else {
        // A result deleted (an operator's clean-up), or an attempt.
        kind = 'delete result';
        const a = pick(attempts.filter((x) => x.state === 'ended'));
        if (a && random() < 0.5) await store.db.deleteFrom('call_results').where('attempt_id', '=', a.id).execute();
        else if (a) await store.db.deleteFrom('attempts').where('id', '=', a.id).execute();
      }
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      if (step % 20 === 19) {
        await expectCountersEqualRecount();
        const n = await expectSuccessesEqualJudgment(rules, step % 40 === 39);
        for (const [id, rule] of rules) mostSuccesses = Math.max(mostSuccesses, Object.values(await judgedFromCalls(id, rule)).reduce((a, b) => a + b, 0));
        vouched += n;
        judgedFromCallsOnly += CAMPAIGNS.length - n;
      }
    }
    await expectCountersEqualRecount();
    await expectSuccessesEqualJudgment(rules, true);
    // Every kind of write happened, and the figures are not trivially empty.
    expect([...kinds.keys()].sort()).toEqual(['bulk counted', 'cancel', 'claim', 'confirm', 'delete', 'delete result', 'erase', 'import', 'late cost', 'move', 'operator rewrite', 'outcome', 'rule change', 'sync', 'variant change']);
    const figures = await variantCountsByCampaign(store.db, CAMPAIGNS);
    const all = [...figures.values()].flat();
    expect(all.reduce((n, v) => n + v.reachedLeads, 0)).toBeGreaterThan(3);
    expect(all.reduce((n, v) => n + v.cost, 0)).toBeGreaterThan(1);
    // Both ways were taken: kept sums that vouched, and campaigns judged from their calls.
    expect(vouched).toBeGreaterThan(5);
    expect(judgedFromCallsOnly).toBeGreaterThan(2);

    expect(mostSuccesses).toBeGreaterThan(1);

    // A deleted campaign leaves no counters behind.
    await store.db.deleteFrom('campaigns').where('id', '=', 2).execute();
    expect(await store.db.selectFrom('variant_counts').select('variant').where('campaign_id', '=', 2).execute()).toEqual([]);
    expect(await store.db.selectFrom('lead_variant_figures').select('lead_id').where('campaign_id', '=', 2).execute()).toEqual([]);
    expect(await store.db.selectFrom('variant_successes').select('variant').where('campaign_id', '=', 2).execute()).toEqual([]);
    await expectCountersEqualRecount();
  });

  it('successes under success_when equal a full judgment through answers, late variables, revisions, stale writers and rule changes', async () => {
    let seed = 5;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const rules = new Map<number, VariableRule>([[1, RULES[0]!], [2, RULES[1]!]]);
    const before = new Map<number, VariableRule>(rules);
    const LEADS = 80;
    for (let id = 1; id <= LEADS; id++) await addLead(id, id % 3 === 0 ? 2 : 1, pick(['a', 'b']));
    let attempt = 0;
    let vouched = 0;
    let mostSuccesses = 0;
    for (let step = 1; step <= 240; step++) {
      const roll = random();
      const campaignId = pick(CAMPAIGNS);
      if (roll < 0.55) {
        // A call ends: its result (maybe with variables, judged under the writer's rule), then its outcome.
        const leadId = pick([...Array(LEADS).keys()].map((i) => i + 1).filter((id) => (id % 3 === 0 ? 2 : 1) === campaignId));
        await addAttempt(++attempt, leadId, campaignId);
        const value = pick(rules.get(campaignId)!.values);
        const extracted = random() < 0.85 ? { interest: random() < 0.5 ? pick(ANSWERS) : random() < 0.5 ? ` ${value.toUpperCase()} ` : value } : undefined;
        const r = random();
        const rule = r < 0.85 ? rules.get(campaignId) : r < 0.93 ? before.get(campaignId) : undefined;
        const provisional = random() < 0.3;
        if (random() < 0.8) await price({ id: attempt, campaign_id: campaignId, lead_id: leadId }, 0.5, provisional ? 'webhook' : 'poll', { ...(extracted ? { extracted } : {}), ...(rule ? { rule } : {}) });
        await markEnded(store.db, attempt, { callStatus: 'completed', answeredBy: null, outcome: random() < 0.6 ? 'success' : 'busy', source: provisional ? 'webhook' : 'poll', endedAt: 1 });
      } else if (roll < 0.65 && attempt > 0) {
        // The call list confirms a webhook success, or revises it to a voicemail; or brings the variables late.
        const id = 1 + Math.floor(random() * attempt);
        const a = await store.db.selectFrom('attempts').selectAll().where('id', '=', id).executeTakeFirst();
        if (!a) continue;
        if (a.outcome_source === 'webhook' && a.outcome === 'success') {
          if (random() < 0.5) await markProvisionalConfirmed(store.db, id, 'human');
          else await markProvisionalVoicemail(store.db, id, 'machine');
        } else await price(a, null, 'poll', { extracted: { interest: pick(rules.get(Number(a.campaign_id))!.values) }, rule: rules.get(Number(a.campaign_id))! });
      } else if (roll < 0.78) {
        // The file's rule edited; the sync judges again now or at a later load.
        before.set(campaignId, rules.get(campaignId)!);
        rules.set(campaignId, pick(RULES));
        if (random() < 0.5) await judgeCampaignSuccesses(store.db, campaignId, rules.get(campaignId)!, before.get(campaignId));
      } else if (roll < 0.86) {
        await judgeCampaignSuccesses(store.db, campaignId, rules.get(campaignId)!, rules.get(campaignId));
      } else if (roll < 0.93 && attempt > 0) {
        // An operator's SQL rewrites a result's variables; retention erases another's.
        const id = 1 + Math.floor(random() * attempt);
        if (random() < 0.6) await store.db.updateTable('call_results').set({ extracted_json: JSON.stringify({ interest: pick(RULES).values[0] }) }).where('attempt_id', '=', id).execute();
        else await store.db.updateTable('call_results').set({ extracted_json: null, erased_at: 1 }).where('attempt_id', '=', id).execute();
      } else if (attempt > 0) {
        // An operator's SQL uncounts (or counts again) every call of a lead.
        const id = 1 + Math.floor(random() * attempt);
        const a = await store.db.selectFrom('attempts').select(['lead_id', 'counted']).where('id', '=', id).executeTakeFirst();
        if (a) await store.db.updateTable('attempts').set({ counted: Number(a.counted) === 1 ? 0 : 1 }).where('lead_id', '=', a.lead_id).execute();
      }
      if (step % 10 === 0) {
        vouched += await expectSuccessesEqualJudgment(rules, step % 30 === 0);
        for (const [id, rule] of rules) mostSuccesses = Math.max(mostSuccesses, Object.values(await judgedFromCalls(id, rule)).reduce((a, b) => a + b, 0));
      }
    }
    await expectCountersEqualRecount();
    await expectSuccessesEqualJudgment(rules, true);
    expect(vouched).toBeGreaterThan(10);
    expect(mostSuccesses).toBeGreaterThan(5);
  });

  it('a lead whose variant is replaced takes its calls, reach and cost to the new variant', async () => {
    await addLead(1, 1);
    await settleLeadVariants(store.db, [{ leadId: 1, variant: 'c' }], ['a', 'c']);
    await addAttempt(1, 1, 1, 'success');
    await price({ id: 1, campaign_id: 1, lead_id: 1 }, 1.5);
    await addAttempt(2, 1, 1, 'busy');
    await addAttempt(3, 1, 1, 'busy', 0); // not counted
    expect(await variantCountsByCampaign(store.db, [1])).toEqual(new Map([[1, [{ variant: 'c', leads: 1, calls: 2, calledLeads: 1, reachedLeads: 1, cost: 1.5 }]]]));
    // 'c' left the file: the next claim gives the lead 'a', and everything it had goes with it.
    await settleLeadVariants(store.db, [{ leadId: 1, variant: 'a' }], ['a']);
    expect(await variantCountsByCampaign(store.db, [1])).toEqual(new Map([[1, [{ variant: 'a', leads: 1, calls: 2, calledLeads: 1, reachedLeads: 1, cost: 1.5 }]]]));
  });

  it('writers on several connections (an outcome, a late cost, a claim settling variants) neither deadlock nor lose a count', async () => {
    await store.close();
    store = await openTestStore({ maxConnections: 4 });
    await migrateToLatest(store.db, { clock: new ManualClock(0) });
    for (const id of CAMPAIGNS) await addCampaign(id);
    const LEADS = 48;
    for (let id = 1; id <= LEADS; id++) {
      await addLead(id, 1, id % 2 === 0 ? 'a' : 'b');
      await addAttempt(id, id, 1);
    }
    // Four writers over disjoint leads of one campaign and both variants, each transaction as
    // the engine writes an outcome: the call's result (0028's spend rows), then the attempt,
    // then the lead (0002's lead_counts); beside them, late costs and claims settling variants.
    const writer = (w: number) => async () => {
      for (let id = w + 1; id <= LEADS; id += 4) {
        await store.db.transaction().execute(async (trx) => {
          const given = readGivenCall({ id: String(id), status: 'completed', cost: id % 3 === 0 ? null : 0.5, extracted_variables: { interest: id % 8 === 0 ? 'JA' : 'no' } }, 'UTC').fields;
          await mergeCallResult(trx, { attemptId: id, campaignId: 1, leadId: id }, given, { source: 'poll', now: 0, keepTranscripts: false, successWhen: RULES[id % 5 === 0 ? 1 : 0] });
          await markEnded(trx, id, { callStatus: 'completed', answeredBy: 'human', outcome: id % 4 === 0 ? 'success' : 'busy', source: 'poll', endedAt: 1 });
          await trx.updateTable('leads').set({ state: 'completed' }).where('id', '=', id).execute();
        });
        if (id % 3 === 0) await price({ id, campaign_id: 1, lead_id: id }, 0.25);
        await settleLeadVariants(store.db, [{ leadId: id, variant: 'c' }], ['c']);
      }
    };
    // Beside them, the config sync judging the campaign's results again, as after a rule change.
    const judge = async () => {
      for (let round = 0; round < 6; round++) await judgeCampaignSuccesses(store.db, 1, RULES[round % 2]!, RULES[(round + 1) % 2]);
      await judgeCampaignSuccesses(store.db, 1, RULES[0]!, RULES[1]);
    };
    await Promise.all([...[0, 1, 2, 3].map((w) => writer(w)()), judge()]);
    await expectCountersEqualRecount();
    // Once the writers are done, a sync judges what the others wrote under the other rule; then the sums vouch.
    await expectSuccessesEqualJudgment(new Map([[1, RULES[0]!]]), true);
    expect((await keptSuccesses(store.db, [{ id: 1, key: successRuleKey(RULES[0]!) }])).get(1)).toEqual(new Map([['c', LEADS / 8]]));
    expect(normal(await variantCountsByCampaign(store.db, [1]))).toEqual({ 1: [{ variant: 'c', leads: LEADS, calls: LEADS, calledLeads: LEADS, reachedLeads: LEADS / 4, cost: LEADS * 0.5 - (LEADS / 3) * 0.25 }] });
  });

  it('a store upgraded with calls already made starts from their recount', async () => {
    await store.close();
    store = await openTestStore();
    const older = Object.fromEntries(Object.entries(migrations).filter(([version]) => version < '0031_variant_counts'));
    await migrateToLatest(store.db, { clock: new ManualClock(0), migrations: older });
    for (const id of CAMPAIGNS) await addCampaign(id);
    await addLead(1, 1, 'a');
    await addLead(2, 1, 'b');
    await addLead(3, 2, 'a');
    await addLead(4, 1, null); // not called yet
    await addLead(5, 1, 'a'); // given its variant, not called yet
    await addAttempt(1, 1, 1, 'busy');
    await addAttempt(2, 1, 1, 'success');
    await addAttempt(3, 2, 1, 'no-answer');
    await addAttempt(4, 2, 1, 'success', 0); // not counted
    await addAttempt(5, 3, 2, 'success');
    await addAttempt(6, 3, 2); // live
    // Results as a store of before 0035 holds them (the writer of today also judges them).
    const result = async (attemptId: number, leadId: number, campaignId: number, cost: number | null, interest?: string) => {
      await store.db.insertInto('call_results').values({ attempt_id: attemptId, campaign_id: campaignId, lead_id: leadId, call_id: null, status: 'completed', answered_by: null, duration_seconds: null, started_at: null, ended_at: null, cost, recording_url: null, transcript_json: null, extracted_json: interest === undefined ? null : JSON.stringify({ interest }), evaluation_json: null, source: 'poll', received_at: 0, updated_at: 0, erased_at: null } as never).execute();
    };
    await result(1, 1, 1, 0.25, 'no');
    await result(2, 1, 1, 1, ' Yes');
    await result(4, 2, 1, 9, 'yes'); // an uncounted call's cost is not the variant's, nor its answer
    await result(5, 3, 2, null, 'yes');
    const before = normal(await recountVariantsByCampaign(store.db, CAMPAIGNS));
    expect(before).toEqual({
      1: [
        { variant: 'a', leads: 2, calls: 2, calledLeads: 1, reachedLeads: 1, cost: 1.25 },
        { variant: 'b', leads: 1, calls: 1, calledLeads: 1, reachedLeads: 0, cost: 0 },
      ],
      2: [{ variant: 'a', leads: 1, calls: 1, calledLeads: 1, reachedLeads: 1, cost: 0 }],
    });
    await migrateToLatest(store.db, { clock: new ManualClock(0) });
    await expectCountersEqualRecount();
    expect(normal(await variantCountsByCampaign(store.db, CAMPAIGNS))).toEqual(before);
    // Nothing judged yet: the kept sums vouch for no campaign with answers until the sync judges them.
    const rule = RULES[0]!;
    const rules = new Map(CAMPAIGNS.map((id) => [id, rule]));
    expect(await expectSuccessesEqualJudgment(rules, false)).toBe(0);
    expect(await judgeCampaignSuccesses(store.db, 1, rule)).toBe(1); // the one answered call: busy and uncounted ones are not counted
    expect(await judgeCampaignSuccesses(store.db, 2, rule)).toBe(1);
    expect(await judgeCampaignSuccesses(store.db, 1, rule, rule)).toBe(0); // nothing left to judge
    expect(await expectSuccessesEqualJudgment(rules, false)).toBe(2);
    expect((await keptSuccesses(store.db, [{ id: 1, key: successRuleKey(rule) }])).get(1)).toEqual(new Map([['a', 1]]));
    // And the triggers go on from there: a late cost, the live call's outcome.
    await price({ id: 5, campaign_id: 2, lead_id: 3 }, 0.5);
    await markEnded(store.db, 6, { callStatus: 'completed', answeredBy: 'human', outcome: 'busy', source: 'poll', endedAt: 1 });
    expect(normal(await variantCountsByCampaign(store.db, [2]))).toEqual({ 2: [{ variant: 'a', leads: 1, calls: 2, calledLeads: 1, reachedLeads: 1, cost: 0.5 }] });
    await expectCountersEqualRecount();
  });
});

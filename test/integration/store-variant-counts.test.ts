// The per-variant figures status reads (README, "Assistant variants") are kept by the
// database (migration 0031): after any mix of the writes the engine, an import or an operator
// makes, they equal a recount of the rows, on SQLite and PostgreSQL.
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
import { recountVariantsByCampaign, settleLeadVariants, variantCountsByCampaign, type VariantCounts } from '../../src/store/variants.js';
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

/** What a source says of attempt `id`'s call: its cost, or none yet (the first known cost is kept). */
async function price(attempt: { id: number; campaign_id: number; lead_id: number }, cost: number | null, source: 'webhook' | 'poll' = 'poll'): Promise<void> {
  await mergeCallResult(store.db, { attemptId: attempt.id, campaignId: attempt.campaign_id, leadId: attempt.lead_id }, readGivenCall({ id: String(attempt.id), status: 'completed', cost }, 'UTC').fields, { source, now: 0, keepTranscripts: false });
}

/** Figures in one order, costs to a millionth (the counters add and take away doubles). */
function normal(byCampaign: Map<number, VariantCounts[]>): Record<number, VariantCounts[]> {
  const out: Record<number, VariantCounts[]> = {};
  for (const [id, list] of byCampaign) {
    const kept = list.filter((v) => v.leads > 0).map((v) => ({ ...v, cost: Math.round(v.cost * 1e6) / 1e6 }));
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
    for (let i = 1; i <= 30; i++) await addLead(null, i % 4 === 0 ? 2 : 1);
    let nextAttempt = 1;
    const kinds = new Map<string, number>();
    for (let step = 0; step < 400; step++) {
      const leads = await store.db.selectFrom('leads').selectAll().execute();
      const attempts = await store.db.selectFrom('attempts').selectAll().execute();
      const live = attempts.filter((a) => a.state === 'placed');
      const idle = leads.filter((l) => !live.some((a) => Number(a.lead_id) === Number(l.id)) && l.state !== 'moved');
      const roll = random();
      let kind: string;
      if (roll < 0.25 && idle.length > 0) {
        // A claim: the lead's variant is settled (written at its first claim), then the attempt.
        kind = 'claim';
        const lead = pick(idle)!;
        await settleLeadVariants(store.db, [{ leadId: Number(lead.id), variant: pick(known)! }], known);
        await addAttempt(nextAttempt++, Number(lead.id), Number(lead.campaign_id));
      } else if (roll < 0.45 && live.length > 0) {
        // An outcome: from the call list (final), or a webhook's success (provisional), with or without its cost yet.
        kind = 'outcome';
        const a = pick(live)!;
        const outcome = pick(['success', 'success', 'busy', 'no-answer', 'voicemail'] as const)!;
        const provisional = outcome === 'success' && random() < 0.5;
        if (random() < 0.7) await price(a, random() < 0.3 ? null : Math.round(random() * 300) / 100, provisional ? 'webhook' : 'poll');
        await markEnded(store.db, Number(a.id), { callStatus: 'completed', answeredBy: null, outcome, source: provisional ? 'webhook' : 'poll', endedAt: 1 });
      } else if (roll < 0.53) {
        // The call list confirms a provisional success, or says it was a machine: the outcome is set again.
        kind = 'confirm';
        const a = pick(attempts.filter((x) => x.outcome_source === 'webhook' && x.outcome === 'success'));
        if (a && random() < 0.5) await markProvisionalConfirmed(store.db, Number(a.id), 'human');
        else if (a) await markProvisionalVoicemail(store.db, Number(a.id), 'machine');
      } else if (roll < 0.63) {
        // A late cost (the first known cost is kept; a second source repeats it).
        kind = 'late cost';
        const a = pick(attempts.filter((x) => x.state === 'ended'));
        if (a) await price(a, Math.round(random() * 300) / 100);
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
      if (step % 20 === 19) await expectCountersEqualRecount();
    }
    await expectCountersEqualRecount();
    // Every kind of write happened, and the figures are not trivially empty.
    expect([...kinds.keys()].sort()).toEqual(['bulk counted', 'cancel', 'claim', 'confirm', 'delete', 'delete result', 'import', 'late cost', 'move', 'outcome', 'variant change']);
    const figures = await variantCountsByCampaign(store.db, CAMPAIGNS);
    const all = [...figures.values()].flat();
    expect(all.reduce((n, v) => n + v.reachedLeads, 0)).toBeGreaterThan(3);
    expect(all.reduce((n, v) => n + v.cost, 0)).toBeGreaterThan(1);

    // A deleted campaign leaves no counters behind.
    await store.db.deleteFrom('campaigns').where('id', '=', 2).execute();
    expect(await store.db.selectFrom('variant_counts').select('variant').where('campaign_id', '=', 2).execute()).toEqual([]);
    expect(await store.db.selectFrom('lead_variant_figures').select('lead_id').where('campaign_id', '=', 2).execute()).toEqual([]);
    await expectCountersEqualRecount();
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
          await mergeCallResult(trx, { attemptId: id, campaignId: 1, leadId: id }, readGivenCall({ id: String(id), status: 'completed', cost: id % 3 === 0 ? null : 0.5 }, 'UTC').fields, { source: 'poll', now: 0, keepTranscripts: false });
          await markEnded(trx, id, { callStatus: 'completed', answeredBy: 'human', outcome: id % 4 === 0 ? 'success' : 'busy', source: 'poll', endedAt: 1 });
          await trx.updateTable('leads').set({ state: 'completed' }).where('id', '=', id).execute();
        });
        if (id % 3 === 0) await price({ id, campaign_id: 1, lead_id: id }, 0.25);
        await settleLeadVariants(store.db, [{ leadId: id, variant: 'c' }], ['c']);
      }
    };
    await Promise.all([0, 1, 2, 3].map((w) => writer(w)()));
    await expectCountersEqualRecount();
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
    await price({ id: 1, campaign_id: 1, lead_id: 1 }, 0.25);
    await price({ id: 2, campaign_id: 1, lead_id: 1 }, 1);
    await price({ id: 4, campaign_id: 1, lead_id: 2 }, 9); // an uncounted call's cost is not the variant's
    await price({ id: 5, campaign_id: 2, lead_id: 3 }, null);
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
    // And the triggers go on from there: a late cost, the live call's outcome.
    await price({ id: 5, campaign_id: 2, lead_id: 3 }, 0.5);
    await markEnded(store.db, 6, { callStatus: 'completed', answeredBy: 'human', outcome: 'busy', source: 'poll', endedAt: 1 });
    expect(normal(await variantCountsByCampaign(store.db, [2]))).toEqual({ 2: [{ variant: 'a', leads: 1, calls: 2, calledLeads: 1, reachedLeads: 1, cost: 0.5 }] });
    await expectCountersEqualRecount();
  });
});

import { sql, type Kysely, type Transaction } from 'kysely';
import type { BudgetSpend } from '../stats/budget.js';
import { LIVE_ATTEMPT_STATES_SQL } from './state-lists.js';
import type { Database } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * How long an ended call without a cost counts at the mean: the call list brings the cost
 * within minutes; a service that never prices a call must not hold the budget for ever.
 */
export const UNPRICED_WINDOW_MS = 86_400_000;

/** The quarter hours the spending is kept by (migration 0028): a budget day is a run of them. */
const BUCKET_MS = 900_000;

/**
 * A campaign's spending (README, "Budgets"), made once per pass; never less than it is.
 * The sums are the database's own (campaign_spend, kept by triggers as calls are priced),
 * so a read costs the same at the first call and the millionth; the calls to be priced are
 * counted through indexes that hold only live attempts and unpriced results.
 */
export async function budgetSpend(db: Db, campaignId: number, dayStart: number, now: number): Promise<BudgetSpend> {
  return (await budgetSpendByCampaign(db, [{ campaignId, dayStart }], now)).get(campaignId) ?? noSpend();
}

/**
 * budgetSpend of several campaigns, each with its own local midnight, in three reads for
 * all of them (one more per further distinct midnight: campaigns of one zone share theirs),
 * not three per campaign: `status` of 100 campaigns made 300 statements.
 */
export async function budgetSpendByCampaign(db: Db, campaigns: readonly { campaignId: number; dayStart: number }[], now: number): Promise<Map<number, BudgetSpend>> {
  const out = new Map<number, BudgetSpend>();
  if (campaigns.length === 0) return out;
  const ids = [...new Set(campaigns.map((c) => c.campaignId))];
  for (const id of ids) out.set(id, noSpend());
  const at = (id: unknown): BudgetSpend => out.get(Number(id))!;
  // The calls still to be priced are read FIRST. The reads are separate statements, and on
  // PostgreSQL another connection may price a call between them: read in this order, a call
  // priced in between is counted twice (pending, then spent), which only holds the budget
  // a little early; read the other way round it was counted in neither, and one more call
  // could be placed over the cap.
  const live = await db
    .selectFrom('attempts')
    .select(['campaign_id', sql<number>`count(*)`.as('n')])
    .where('campaign_id', 'in', ids)
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .groupBy('campaign_id')
    .execute();
  for (const r of live) at(r.campaign_id).pending += Number(r.n);
  const unpriced = await db
    .selectFrom('call_results as r')
    .innerJoin('attempts as a', 'a.id', 'r.attempt_id')
    .select(['r.campaign_id', sql<number>`count(*)`.as('n')])
    .where('r.campaign_id', 'in', ids)
    .where('r.cost', 'is', null)
    .where('a.state', '=', 'ended')
    .where('a.created_at', '>=', now - UNPRICED_WINDOW_MS)
    .groupBy('r.campaign_id')
    .execute();
  for (const r of unpriced) at(r.campaign_id).pending += Number(r.n);
  // A day starts at a local midnight, a whole number of quarter hours in every zone: its
  // first bucket starts exactly there (rounded down, it could only count more).
  const byDay = new Map<number, number[]>();
  for (const c of campaigns) {
    const first = Math.floor(c.dayStart / BUCKET_MS) * BUCKET_MS;
    byDay.set(first, [...(byDay.get(first) ?? []), c.campaignId]);
  }
  for (const [first, dayIds] of byDay) {
    const sums = await db
      .selectFrom('campaign_spend')
      .select(['campaign_id', 'bucket', 'spent', 'costed', 'largest'])
      .where('campaign_id', 'in', dayIds)
      .where((eb) => eb.or([eb('bucket', '=', -1), eb('bucket', '>=', first)]))
      .execute();
    for (const r of sums) {
      const s = at(r.campaign_id);
      if (Number(r.bucket) === -1) Object.assign(s, { spent: Number(r.spent), costed: Number(r.costed), largest: Number(r.largest) });
      else s.spentToday += Number(r.spent);
    }
  }
  return out;
}

/** The spending of a campaign without a priced or pending call. */
export function noSpend(): BudgetSpend {
  return { spent: 0, costed: 0, spentToday: 0, pending: 0, largest: 0 };
}

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
  // The calls still to be priced are read FIRST. The reads are separate statements, and on
  // PostgreSQL another connection may price a call between them: read in this order, a call
  // priced in between is counted twice (pending, then spent), which only holds the budget
  // a little early; read the other way round it was counted in neither, and one more call
  // could be placed over the cap.
  const live = await db
    .selectFrom('attempts')
    .select(sql<number>`count(*)`.as('n'))
    .where('campaign_id', '=', campaignId)
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .executeTakeFirst();
  const unpriced = await db
    .selectFrom('call_results as r')
    .innerJoin('attempts as a', 'a.id', 'r.attempt_id')
    .select(sql<number>`count(*)`.as('n'))
    .where('r.campaign_id', '=', campaignId)
    .where('r.cost', 'is', null)
    .where('a.state', '=', 'ended')
    .where('a.created_at', '>=', now - UNPRICED_WINDOW_MS)
    .executeTakeFirst();
  // A day starts at a local midnight, a whole number of quarter hours in every zone: its
  // first bucket starts exactly there (rounded down, it could only count more).
  const sums = await db
    .selectFrom('campaign_spend')
    .select(['bucket', 'spent', 'costed', 'largest'])
    .where('campaign_id', '=', campaignId)
    .where((eb) => eb.or([eb('bucket', '=', -1), eb('bucket', '>=', Math.floor(dayStart / BUCKET_MS) * BUCKET_MS)]))
    .execute();
  const all = sums.find((r) => Number(r.bucket) === -1);
  const spentToday = sums.reduce((sum, r) => (Number(r.bucket) === -1 ? sum : sum + Number(r.spent)), 0);
  return {
    spent: Number(all?.spent ?? 0),
    costed: Number(all?.costed ?? 0),
    spentToday,
    pending: Number(live?.n ?? 0) + Number(unpriced?.n ?? 0),
    largest: Number(all?.largest ?? 0),
  };
}

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

/** A campaign's spending (README, "Budgets"): three indexed reads, made once per pass; never less than it is. */
export async function budgetSpend(db: Db, campaignId: number, dayStart: number, now: number): Promise<BudgetSpend> {
  // The calls still to be priced are read FIRST. The reads are separate statements, and on
  // PostgreSQL another connection may price a call between them: read in this order, a call
  // priced in between is counted twice (pending, then spent), which only holds the budget
  // a little early; read the other way round it was counted in neither, and one more call
  // could be placed over the cap.
  const pending = await db
    .selectFrom('attempts as a')
    .leftJoin('call_results as r', 'r.attempt_id', 'a.id')
    .select(sql<number>`count(*)`.as('n'))
    .where('a.campaign_id', '=', campaignId)
    .where((eb) =>
      eb.or([
        eb('a.state', 'in', LIVE_ATTEMPT_STATES_SQL),
        eb.and([eb('a.state', '=', 'ended'), eb('r.attempt_id', 'is not', null), eb('r.cost', 'is', null), eb('a.created_at', '>=', now - UNPRICED_WINDOW_MS)]),
      ]),
    )
    .executeTakeFirst();
  const all = await db
    .selectFrom('call_results')
    .select([sql<number | null>`sum(cost)`.as('spent'), sql<number>`count(cost)`.as('costed'), sql<number | null>`max(cost)`.as('largest')])
    .where('campaign_id', '=', campaignId)
    .executeTakeFirst();
  const today = await db
    .selectFrom('attempts as a')
    .innerJoin('call_results as r', 'r.attempt_id', 'a.id')
    .select(sql<number | null>`sum(r.cost)`.as('spent'))
    .where('a.campaign_id', '=', campaignId)
    .where('a.created_at', '>=', dayStart)
    .executeTakeFirst();
  return { spent: Number(all?.spent ?? 0), costed: Number(all?.costed ?? 0), spentToday: Number(today?.spent ?? 0), pending: Number(pending?.n ?? 0), largest: Number(all?.largest ?? 0) };
}

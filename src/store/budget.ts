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
 * budgetSpend of several campaigns, each with its own local midnight, in ONE statement for
 * all of them: `status` of 100 campaigns made 300 statements when each was read alone, and
 * the dial loop reads its campaign's before every pass, where on PostgreSQL each statement
 * is a round trip (three took ~2 ms). One statement also reads one snapshot: a call priced
 * on another connection meanwhile is counted either as pending or as spent, never in
 * neither (which could let one more call over the cap) nor in both.
 */
export async function budgetSpendByCampaign(db: Db, campaigns: readonly { campaignId: number; dayStart: number }[], now: number): Promise<Map<number, BudgetSpend>> {
  const out = new Map<number, BudgetSpend>();
  if (campaigns.length === 0) return out;
  const ids = [...new Set(campaigns.map((c) => c.campaignId))];
  for (const id of ids) out.set(id, noSpend());
  // The arms share one row shape; `kind` says which a row is. Constants, not NULLs, fill the
  // columns an arm has not: PostgreSQL types the NULLs of two arms as text, then fails on a number.
  const zero = sql<number>`0`;
  const pending = [sql.lit<number>(KIND_PENDING).as('kind'), zero.as('bucket'), sql<number>`count(*)`.as('n'), zero.as('spent'), zero.as('costed'), zero.as('largest')] as const;
  // Calls that may still cost: live attempts, and ended calls the service has not priced yet.
  let query = db
    .selectFrom('attempts')
    .select(['campaign_id', ...pending])
    .where('campaign_id', 'in', ids)
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .groupBy('campaign_id')
    .unionAll(
      db
        .selectFrom('call_results as r')
        .innerJoin('attempts as a', 'a.id', 'r.attempt_id')
        .select(['r.campaign_id', ...pending])
        .where('r.campaign_id', 'in', ids)
        .where('r.cost', 'is', null)
        .where('a.state', '=', 'ended')
        .where('a.created_at', '>=', now - UNPRICED_WINDOW_MS)
        .groupBy('r.campaign_id'),
    );
  // A day starts at a local midnight, a whole number of quarter hours in every zone: its
  // first bucket starts exactly there (rounded down, it could only count more).
  const byDay = new Map<number, number[]>();
  for (const c of campaigns) {
    const first = Math.floor(c.dayStart / BUCKET_MS) * BUCKET_MS;
    byDay.set(first, [...(byDay.get(first) ?? []), c.campaignId]);
  }
  for (const [first, dayIds] of byDay) {
    query = query.unionAll(
      db
        .selectFrom('campaign_spend')
        .select(['campaign_id', sql.lit<number>(KIND_SPENT).as('kind'), 'bucket', zero.as('n'), 'spent', 'costed', 'largest'])
        .where('campaign_id', 'in', dayIds)
        .where((eb) => eb.or([eb('bucket', '=', -1), eb('bucket', '>=', first)])),
    );
  }
  for (const r of await query.execute()) {
    const s = out.get(Number(r.campaign_id))!;
    if (Number(r.kind) === KIND_PENDING) s.pending += Number(r.n);
    else if (Number(r.bucket) === -1) Object.assign(s, { spent: Number(r.spent), costed: Number(r.costed), largest: Number(r.largest) });
    else s.spentToday += Number(r.spent);
  }
  return out;
}

/** The kinds of budgetSpendByCampaign's rows. */
const KIND_PENDING = 0;
const KIND_SPENT = 1;

/** The spending of a campaign without a priced or pending call. */
export function noSpend(): BudgetSpend {
  return { spent: 0, costed: 0, spentToday: 0, pending: 0, largest: 0 };
}

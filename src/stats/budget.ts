import { DateTime } from 'luxon';

// Budgets (README, "Budgets"): what a campaign has spent, and whether one more call could
// take it over a cap. Pure: the store reads the figures once per pass (store/budget.ts),
// the planner asks here for each lead, and `status` asks the same, so they agree.

/** A campaign file's budget, as this arithmetic needs it (the configuration's CampaignBudget fits). */
export interface BudgetCaps {
  maxCost: number | null;
  maxCostPerDay: number | null;
  assumedCostPerCall: number;
}

/** What a campaign's calls have cost so far, read from the results. */
export interface BudgetSpend {
  /** Sum of the known costs of every call. */
  spent: number;
  /** Calls whose cost is known (the mean's divisor). */
  costed: number;
  /** Sum of the known costs of the calls placed since the campaign's local midnight. */
  spentToday: number;
  /** Calls whose cost is not known yet: live, unknown, or ended with the cost still to come. */
  pending: number;
  /** The largest known cost of one call (0 when none is known). */
  largest: number;
}

/**
 * What holds the campaign back: a cap, or `first_cost` (one call waits for its price
 * before the next is placed; see firstCostHold). Only a cap is `paused (budget)`.
 */
export interface BudgetHold {
  cap: 'max_cost' | 'max_cost_per_day' | 'first_cost';
  /** The cap's amount; for first_cost, the number of unpriced calls allowed (1). */
  limit: number;
  /** Known spending against the cap, and what the calls not yet priced count for. */
  spent: number;
  committed: number;
  /** When the cap lets calls through again by itself (the next local midnight for the daily cap); null: when the budget is raised. */
  resumesAt: number | null;
}

/** Costs are money with cents: a rounding error must not stop the last call that fits. */
const EPSILON = 1e-9;

/**
 * Whether the campaign has learnt what its calls cost: some call has a cost above zero.
 * Calls nobody answered cost nothing; a mean of those alone (0) would let every call through.
 */
export function costKnown(s: BudgetSpend): boolean {
  return s.spent > 0;
}

/** What a call whose cost is not known counts for: the mean so far, or the assumed cost before any is known. */
export function unitCost(budget: BudgetCaps, s: BudgetSpend): number {
  return costKnown(s) ? s.spent / s.costed : budget.assumedCostPerCall;
}

/** Unpriced calls allowed at once while no cost is known (see budgetHold). */
export const FIRST_COST_PROBES = 1;

/**
 * The cap one more call could overshoot, or null when it fits under both. `extra` counts
 * the calls already picked in this pass, not yet in `pending`.
 */
export function budgetHold(budget: BudgetCaps, s: BudgetSpend, extra: number, dayEnds: number): BudgetHold | null {
  const unit = unitCost(budget, s);
  // Calls already out count at the largest cost seen, the next one at the mean: admitted
  // only when spent + live × largest + mean fits, the bill stays under the cap plus the
  // next call's real cost, unless a live call costs more than any call before it.
  const committed = (s.pending + extra) * Math.max(unit, s.largest);
  // Overshoot: assumed_cost_per_call is a guess. Were it far below the real cost, counting
  // live calls at it would let a whole batch (up to max_calls_in_parallel, or more as calls
  // end without their cost yet) be placed before the first price arrives, each of them a
  // real cost over what was counted. So until a cost above zero is known, one call at a
  // time is placed and the next waits for its price: however wrong the guess, spending
  // goes over a cap by at most one call. From then on, as above.
  if (!costKnown(s) && s.pending + extra >= FIRST_COST_PROBES) {
    return { cap: 'first_cost', limit: FIRST_COST_PROBES, spent: s.spent, committed, resumesAt: null };
  }
  if (budget.maxCost !== null && s.spent + committed + unit > budget.maxCost + EPSILON) {
    return { cap: 'max_cost', limit: budget.maxCost, spent: s.spent, committed, resumesAt: null };
  }
  if (budget.maxCostPerDay !== null && s.spentToday + committed + unit > budget.maxCostPerDay + EPSILON) {
    return { cap: 'max_cost_per_day', limit: budget.maxCostPerDay, spent: s.spentToday, committed, resumesAt: dayEnds };
  }
  return null;
}

/** The campaign's day in its zone: [start, end) in epoch ms. */
export function budgetDay(zone: string, now: number): { start: number; end: number } {
  const start = DateTime.fromMillis(now, { zone }).startOf('day');
  return { start: start.toMillis(), end: start.plus({ days: 1 }).toMillis() };
}

/** Whether the hold is a cap reached (`paused (budget)`), not the wait for a first price. */
export function budgetPaused(h: BudgetHold | null): boolean {
  return h !== null && h.cap !== 'first_cost';
}

/** One sentence for explain. */
export function budgetText(h: BudgetHold): string {
  const money = (n: number) => n.toFixed(2);
  if (h.cap === 'first_cost') return 'no call has a known cost yet: one call at a time is placed until the first cost arrives';
  const what = h.cap === 'max_cost' ? 'max_cost' : 'max_cost_per_day (today)';
  return `budget ${what} ${money(h.limit)}: ${money(h.spent)} spent and ${money(h.committed)} for calls not yet priced leave no room for another call`;
}

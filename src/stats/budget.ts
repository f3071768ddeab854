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
}

/** A cap that holds the campaign back. */
export interface BudgetHold {
  cap: 'max_cost' | 'max_cost_per_day';
  limit: number;
  /** Known spending against the cap, and what the calls not yet priced count for. */
  spent: number;
  committed: number;
  /** When the cap lets calls through again by itself (the next local midnight for the daily cap); null: when the budget is raised. */
  resumesAt: number | null;
}

/** Costs are money with cents: a rounding error must not stop the last call that fits. */
const EPSILON = 1e-9;

/** What a call whose cost is not known counts for: the mean so far, or the assumed cost before any is known. */
export function unitCost(budget: BudgetCaps, s: BudgetSpend): number {
  return s.costed > 0 ? s.spent / s.costed : budget.assumedCostPerCall;
}

/**
 * The cap one more call could overshoot, or null when it fits under both. `extra` counts
 * the calls already picked in this pass, not yet in `pending`.
 */
export function budgetHold(budget: BudgetCaps, s: BudgetSpend, extra: number, dayEnds: number): BudgetHold | null {
  const unit = unitCost(budget, s);
  const committed = (s.pending + extra) * unit;
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

/** One sentence for explain. */
export function budgetText(h: BudgetHold): string {
  const money = (n: number) => n.toFixed(2);
  const what = h.cap === 'max_cost' ? 'max_cost' : 'max_cost_per_day (today)';
  return `budget ${what} ${money(h.limit)}: ${money(h.spent)} spent and ${money(h.committed)} for calls not yet priced leave no room for another call`;
}

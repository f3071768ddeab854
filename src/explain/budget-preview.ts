// `campaignd validate --preview` for a budgeted campaign (README, "Budgets"): what it has
// spent, what a call counts for, what the leads still to call would cost, and whether the
// caps in the file being validated cover them or would pause the campaign (and when).
// The figures are the dial loop's: the same spending read and the same arithmetic.
import type { Kysely } from 'kysely';
import type { CampaignBudget } from '../config/types.js';
import { budgetDay, budgetHold, budgetPaused, budgetText, costKnown, unitCost } from '../stats/budget.js';
import { budgetSpend } from '../store/budget.js';
import type { Database } from '../store/types.js';

export interface BudgetPreview {
  max_cost: number | null;
  max_cost_per_day: number | null;
  spent: number;
  spent_today: number;
  /** Calls out or ended without their cost yet. */
  unpriced_calls: number;
  /** What one call counts for: the mean of the priced calls, or assumed_cost_per_call before any cost is known. */
  cost_per_call: number;
  cost_from: 'mean' | 'assumed';
  /** Leads that may still be called (not final, not on a live call), at one call each. */
  leads_to_call: number;
  projected: number;
  /** How many more calls max_cost leaves room for (null without max_cost). */
  calls_left: number | null;
  /** A cap holds the campaign now: why, in explain's words (null: it may dial). */
  paused_now: string | null;
  /** max_cost runs out before the leads to call do: the campaign will show paused (budget). */
  runs_out: boolean;
}

const money = (n: number): number => Math.round(n * 100) / 100;

export async function previewBudget(db: Kysely<Database>, campaignId: number, budget: CampaignBudget, zone: string, now: number, leadsToCall: number): Promise<BudgetPreview> {
  const day = budgetDay(zone, now);
  const spend = await budgetSpend(db, campaignId, day.start, now);
  const unit = unitCost(budget, spend);
  const committed = spend.pending * Math.max(unit, spend.largest);
  const callsLeft = budget.maxCost === null ? null : unit > 0 ? Math.max(0, Math.floor((budget.maxCost - spend.spent - committed) / unit + 1e-9)) : Number.POSITIVE_INFINITY;
  const hold = budgetHold(budget, spend, 0, day.end);
  return {
    max_cost: budget.maxCost,
    max_cost_per_day: budget.maxCostPerDay,
    spent: money(spend.spent),
    spent_today: money(spend.spentToday),
    unpriced_calls: spend.pending,
    cost_per_call: money(unit),
    cost_from: costKnown(spend) ? 'mean' : 'assumed',
    leads_to_call: leadsToCall,
    projected: money(leadsToCall * unit),
    calls_left: callsLeft,
    paused_now: budgetPaused(hold) ? budgetText(hold!) : null,
    runs_out: callsLeft !== null && callsLeft < leadsToCall,
  };
}

/** The preview's lines for a person, indented under the campaign's. */
export function renderBudgetPreview(b: BudgetPreview): string[] {
  const m = (n: number): string => n.toFixed(2);
  const caps = [b.max_cost === null ? null : `${m(b.spent)} spent of max_cost ${m(b.max_cost)}`, b.max_cost_per_day === null ? null : `${m(b.spent_today)} today of max_cost_per_day ${m(b.max_cost_per_day)}`].filter((x) => x !== null);
  const per = b.cost_from === 'mean' ? `${m(b.cost_per_call)} a call (mean so far)` : `${m(b.cost_per_call)} a call (assumed_cost_per_call: no cost known yet, so one call at a time until the first arrives)`;
  const out = [`  budget: ${caps.join(', ')}; ${per}${b.unpriced_calls > 0 ? `; ${b.unpriced_calls} call${b.unpriced_calls === 1 ? '' : 's'} not priced yet` : ''}`];
  out.push(`  budget: ${b.leads_to_call} lead${b.leads_to_call === 1 ? '' : 's'} still to call ≈ ${m(b.projected)} at one call each (retries cost more)`);
  if (b.calls_left !== null) {
    const room = Number.isFinite(b.calls_left) ? `room for about ${b.calls_left} more call${b.calls_left === 1 ? '' : 's'}` : 'no cost known to count against it';
    out.push(`  budget: max_cost leaves ${room}${b.runs_out ? `: it runs out first and the campaign will show paused (budget); raise max_cost to about ${m((b.max_cost ?? 0) + (b.leads_to_call - b.calls_left) * b.cost_per_call)} to call them all once` : ''}`);
  }
  if (b.paused_now) out.push(`  budget: paused (budget) now: ${b.paused_now}`);
  return out;
}

import type { CampaignStatus } from './types.js';

// The human `status`'s budget lines (README, "Budgets"): one per budgeted campaign, with the
// figures of `status --json`'s campaigns[].budget, and how to resume a campaign a cap holds.

const money = (n: number): string => n.toFixed(2);

export function renderBudgetLines(campaigns: readonly CampaignStatus[]): string[] {
  return campaigns.flatMap((c) => {
    const b = c.budget;
    if (!b) return [];
    const parts = [
      b.max_cost === null ? `${money(b.spent)} spent` : `${money(b.spent)} spent of ${money(b.max_cost)}, ${money(b.remaining ?? 0)} left`,
      ...(b.max_cost_per_day === null ? [] : [`today ${money(b.spent_today)} of ${money(b.max_cost_per_day)}`]),
      `projected ${money(b.projected)} for the leads still to call`,
    ];
    const held = b.paused ? `: paused (budget), raise the cap in the campaign file and reload to resume${b.max_cost_per_day === null ? '' : " (a daily cap also lets calls through again at the campaign's midnight)"}` : '';
    return [`${c.name} budget: ${parts.join(' · ')}${held}`];
  });
}

// The human `campaignd status` for budgeted campaigns: the state reads paused (budget) when
// a cap holds it, and a line per budgeted campaign gives spent / remaining / projected.
import { describe, expect, it } from 'vitest';
import { renderBudgetLines } from '../../src/status/render-budget.js';
import type { BudgetStatus, CampaignStatus } from '../../src/status/types.js';

const withBudget = (name: string, budget?: BudgetStatus): CampaignStatus => ({ name, ...(budget ? { budget } : {}) }) as CampaignStatus;

describe('status: budget lines', () => {
  it('gives spent of the cap, what is left, today against the daily cap and the projected cost', () => {
    const lines = renderBudgetLines([
      withBudget('spring', { max_cost: 50, max_cost_per_day: 10, spent: 12.5, spent_today: 3.25, remaining: 37.5, projected: 1.8, paused: false }),
      withBudget('plain'),
      withBudget('daily', { max_cost: null, max_cost_per_day: 5, spent: 20, spent_today: 4.9, remaining: null, projected: 3, paused: true }),
    ]);
    expect(lines).toEqual([
      'spring budget: 12.50 spent of 50.00, 37.50 left · today 3.25 of 10.00 · projected 1.80 for the leads still to call',
      'daily budget: 20.00 spent · today 4.90 of 5.00 · projected 3.00 for the leads still to call: paused (budget), raise the cap in the campaign file and reload to resume (a daily cap also lets calls through again at the campaign\'s midnight)',
    ]);
  });
});

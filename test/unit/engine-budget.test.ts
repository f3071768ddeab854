import { describe, expect, it } from 'vitest';
import { budgetDay, budgetHold, unitCost } from '../../src/stats/budget.js';
import type { CampaignBudget } from '../../src/config/types.js';

const budget = (b: Partial<CampaignBudget>): CampaignBudget => ({ maxCost: null, maxCostPerDay: null, assumedCostPerCall: 1, ...b });

describe('budget', () => {
  it('counts unpriced calls at the assumed cost until a cost is known, then at the mean', () => {
    expect(unitCost(budget({ assumedCostPerCall: 0.7 }), { spent: 0, costed: 0, spentToday: 0, pending: 2 })).toBe(0.7);
    expect(unitCost(budget({}), { spent: 3, costed: 4, spentToday: 0, pending: 2 })).toBe(0.75);
  });

  it('lets the last call through that fits exactly, and holds the next', () => {
    const b = budget({ maxCost: 10 });
    // mean 1.00; 7 spent, 2 live, 1 more = 10: fits
    expect(budgetHold(b, { spent: 7, costed: 7, spentToday: 7, pending: 2 }, 0, 0)).toBeNull();
    const hold = budgetHold(b, { spent: 7, costed: 7, spentToday: 7, pending: 2 }, 1, 0);
    expect(hold).toMatchObject({ cap: 'max_cost', limit: 10, spent: 7, committed: 3, resumesAt: null });
  });

  it('holds a daily cap until the end of the campaign day', () => {
    const b = budget({ maxCost: 100, maxCostPerDay: 5 });
    const hold = budgetHold(b, { spent: 40, costed: 40, spentToday: 4.5, pending: 0 }, 0, 1234);
    expect(hold).toMatchObject({ cap: 'max_cost_per_day', limit: 5, spent: 4.5, resumesAt: 1234 });
  });

  it('takes the day in the campaign zone, DST days included', () => {
    const now = Date.parse('2026-03-29T12:00:00Z'); // Berlin springs forward that night: a 23 h day
    const day = budgetDay('Europe/Berlin', now);
    expect(new Date(day.start).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(new Date(day.end).toISOString()).toBe('2026-03-29T22:00:00.000Z');
  });
});

import { describe, expect, it } from 'vitest';
import { budgetDay, budgetHold, budgetPaused, unitCost } from '../../src/stats/budget.js';
import type { CampaignBudget } from '../../src/config/types.js';

const budget = (b: Partial<CampaignBudget>): CampaignBudget => ({ maxCost: null, maxCostPerDay: null, assumedCostPerCall: 1, ...b });

describe('budget', () => {
  it('counts unpriced calls at the assumed cost until a cost is known, then at the mean', () => {
    expect(unitCost(budget({ assumedCostPerCall: 0.7 }), { spent: 0, costed: 0, spentToday: 0, pending: 2, largest: 0 })).toBe(0.7);
    expect(unitCost(budget({}), { spent: 3, costed: 4, spentToday: 0, pending: 2, largest: 1 })).toBe(0.75);
  });

  it('lets the last call through that fits exactly, and holds the next', () => {
    const b = budget({ maxCost: 10 });
    // mean 1.00; 7 spent, 2 live, 1 more = 10: fits
    expect(budgetHold(b, { spent: 7, costed: 7, spentToday: 7, pending: 2, largest: 1 }, 0, 0)).toBeNull();
    const hold = budgetHold(b, { spent: 7, costed: 7, spentToday: 7, pending: 2, largest: 1 }, 1, 0);
    expect(hold).toMatchObject({ cap: 'max_cost', limit: 10, spent: 7, committed: 3, resumesAt: null });
  });

  it('holds a daily cap until the end of the campaign day', () => {
    const b = budget({ maxCost: 100, maxCostPerDay: 5 });
    const hold = budgetHold(b, { spent: 40, costed: 40, spentToday: 4.5, pending: 0, largest: 1 }, 0, 1234);
    expect(hold).toMatchObject({ cap: 'max_cost_per_day', limit: 5, spent: 4.5, resumesAt: 1234 });
  });

  it('takes the day in the campaign zone, DST days included', () => {
    const now = Date.parse('2026-03-29T12:00:00Z'); // Berlin springs forward that night: a 23 h day
    const day = budgetDay('Europe/Berlin', now);
    expect(new Date(day.start).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(new Date(day.end).toISOString()).toBe('2026-03-29T22:00:00.000Z');
  });

  it('places one call at a time until a cost is known, however low the assumed cost', () => {
    // 0.01 assumed against a cap of 100 would have let 100 calls out before the first price.
    const b = budget({ maxCost: 100, assumedCostPerCall: 0.01 });
    expect(budgetHold(b, { spent: 0, costed: 0, spentToday: 0, pending: 0, largest: 0 }, 0, 0)).toBeNull();
    const probe = budgetHold(b, { spent: 0, costed: 0, spentToday: 0, pending: 0, largest: 0 }, 1, 0);
    expect(probe).toMatchObject({ cap: 'first_cost', limit: 1 });
    expect(budgetHold(b, { spent: 0, costed: 0, spentToday: 0, pending: 1, largest: 0 }, 0, 0)?.cap).toBe('first_cost');
    // Waiting for a price is not a pause: status and the dashboard keep saying running.
    expect(budgetPaused(probe)).toBe(false);
    expect(budgetPaused(budgetHold(b, { spent: 100, costed: 3, spentToday: 0, pending: 0, largest: 40 }, 0, 0))).toBe(true);
    // Once priced, calls go out in parallel, counted at the mean.
    expect(budgetHold(b, { spent: 2.5, costed: 1, spentToday: 2.5, pending: 3, largest: 2.5 }, 1, 0)).toBeNull();
  });

  it('calls that cost nothing (nobody answered) do not make the cost known', () => {
    const b = budget({ maxCost: 10, assumedCostPerCall: 0.5 });
    const free = { spent: 0, costed: 4, spentToday: 0, pending: 1, largest: 0 };
    expect(unitCost(b, free)).toBe(0.5);
    expect(budgetHold(b, free, 0, 0)?.cap).toBe('first_cost');
  });

  it('counts calls already out at the largest known cost, the next one at the mean', () => {
    const b = budget({ maxCost: 10 });
    // Mean 1.00, largest 2.00: 4 spent + 2 live × 2 + the next at 1 = 9 fits; 3 live = 11 does not.
    expect(budgetHold(b, { spent: 4, costed: 4, spentToday: 4, pending: 2, largest: 2 }, 0, 0)).toBeNull();
    expect(budgetHold(b, { spent: 4, costed: 4, spentToday: 4, pending: 2, largest: 2 }, 1, 0)).toMatchObject({ cap: 'max_cost', committed: 6 });
  });
});

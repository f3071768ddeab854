// A budgeted campaign against the simulator (README, "Budgets"): it stops mid-way, never
// more than one call's cost over its cap.
import { afterEach, describe, expect, it } from 'vitest';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';
import { budgetSpend } from '../../src/store/budget.js';
import { budgetHold } from '../../src/stats/budget.js';
import type { CampaignBudget } from '../../src/config/types.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe('engine: budgets', () => {
  it('stops a campaign at its max_cost, spending at most one call over it', async () => {
    const numbers = phoneNumbers(30);
    // 30 s calls, each billed one minute (0.094): a 60 s call ends a second or two late on the
    // sped-up clock under load and is billed two, a cost the mean cannot foresee.
    const budget: CampaignBudget = { maxCost: 0.5, maxCostPerDay: null, assumedCostPerCall: 0.25 };
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 0, budget }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 30),
      seed: 7,
    });
    // Held with no call in flight: costs only grow, so no call can follow.
    const s = stack;
    await waitUntil(async () => {
      const spend = await budgetSpend(s.db, 1, 0, s.clock.now());
      return spend.pending === 0 && spend.costed > 0 && budgetHold(budget, spend, 0, 0) !== null;
    }, { timeoutMs: 20_000 });
    const costs = (await stack.db.selectFrom('call_results').select('cost').execute()).map((r) => Number(r.cost ?? 0));
    const spent = costs.reduce((a, b) => a + b, 0);
    expect(costs.length).toBeGreaterThan(0);
    expect(costs.length).toBeLessThan(30);
    expect(spent).toBeLessThanOrEqual(0.5 + Math.max(...costs) + 1e-9);
  });
});

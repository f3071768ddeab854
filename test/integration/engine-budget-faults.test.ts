// Budgets against the simulator when things go wrong (README, "Budgets"): make_call
// answers lost, an assumed cost far below the real one, and a budget raised in the file.
// Spending (the simulator's own record of what every call cost, lost answers included)
// never goes over the cap by more than one call's cost.
import { afterEach, describe, expect, it } from 'vitest';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';
import { budgetSpend } from '../../src/store/budget.js';
import { budgetHold, budgetPaused } from '../../src/stats/budget.js';
import { collectStatus } from '../../src/status/collect.js';
import type { CampaignBudget, CampaignConfig } from '../../src/config/types.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** Resolves when a cap holds the campaign and no call is left unpriced: nothing more can be placed. */
async function heldAndSettled(s: Stack, budget: CampaignBudget): Promise<void> {
  await waitUntil(async () => {
    const spend = await budgetSpend(s.db, 1, 0, s.clock.now());
    return spend.pending === 0 && spend.costed > 0 && budgetPaused(budgetHold(budget, spend, 0, Number.MAX_SAFE_INTEGER));
  }, { timeoutMs: 30_000 });
}

/**
 * What the service charged, by its own record: every call it placed, whether or not its
 * answer reached us. `over` is the most the engine's promise lets that bill exceed a cap:
 * one call (the largest), plus what calls cost beyond the cheapest one. The engine counts a
 * live call at the largest cost seen so far, so a call dearer than any before it (the
 * simulator bills whole minutes of the call's measured length, and under load a timer
 * that fires late makes a 60 s call a two-minute one) goes over by its difference.
 */
function charged(s: Stack): { total: number; max: number; calls: number; over: number } {
  const costs = s.simCalls().map((c) => c.total_cost);
  const max = Math.max(0, ...costs);
  const min = Math.min(max, ...costs);
  const dearer = costs.reduce((sum, c) => sum + (c - min), 0);
  return { total: costs.reduce((a, b) => a + b, 0), max, calls: costs.length, over: max + dearer + 1e-9 };
}

async function isPausedInStatus(s: Stack): Promise<boolean> {
  const report = await collectStatus(s.db, { now: s.clock.now(), version: 't', isPidAlive: () => true });
  return report.campaigns[0]!.budget!.paused;
}

describe('engine: budgets under faults', () => {
  it('with 10 % of make_call answers lost and the assumed cost far too low, spends at most one call over the cap', async () => {
    const numbers = phoneNumbers(40);
    // Every call here costs 0.094 (a 20 s call is billed one minute); assumed at 0.01, the
    // first 8 parallel calls would have gone out together and cost 0.75 against a cap of 0.4.
    const budget: CampaignBudget = { maxCost: 0.4, maxCostPerDay: null, assumedCostPerCall: 0.01 };
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 8, maxRetries: 0, budget }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 20),
      faults: [{ path: '/api/user/make_call', drop_after_create: 0.1 }],
      seed: 5,
    });
    await heldAndSettled(stack, budget);
    const bill = charged(stack);
    expect(bill.calls).toBeGreaterThan(1);
    expect(bill.calls).toBeLessThan(40);
    expect(bill.total).toBeLessThanOrEqual(0.4 + bill.over);
    // The store's sum agrees with the service's bill once every lost answer is reconciled.
    const spend = await budgetSpend(stack.db, 1, 0, stack.clock.now());
    expect(spend.spent).toBeCloseTo(bill.total, 6);
    expect(await isPausedInStatus(stack)).toBe(true);
  });

  it('raising max_cost in the file and reloading resumes the campaign; it pauses again at the new cap', async () => {
    const numbers = phoneNumbers(30);
    const budget: CampaignBudget = { maxCost: 0.3, maxCostPerDay: null, assumedCostPerCall: 0.1 };
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 0, budget }, leads: numbers.map((phone) => ({ phone })) }],
      // 20 s calls: one billed minute each, with 40 simulated seconds (100 ms) of slack for a late timer.
      fixedOutcomes: allSucceed(numbers, 20),
      seed: 9,
    });
    const s = stack;
    await heldAndSettled(s, budget);
    expect(await isPausedInStatus(s)).toBe(true);
    const before = charged(s);
    expect(before.total).toBeLessThanOrEqual(0.3 + before.over);

    // What a config reload (SIGHUP) does with the edited file: the stored settings, then the engine.
    const row = await s.db.selectFrom('campaigns').select('config_json').where('id', '=', 1).executeTakeFirstOrThrow();
    const raised: CampaignBudget = { ...budget, maxCost: 0.8 };
    const config = { ...(JSON.parse(row.config_json) as CampaignConfig), budget: raised };
    await s.db.updateTable('campaigns').set({ config_json: JSON.stringify(config) }).where('id', '=', 1).execute();
    expect(await isPausedInStatus(s)).toBe(false);
    await s.engine!.reload();

    await waitUntil(async () => charged(s).calls > before.calls, { timeoutMs: 20_000 });
    await heldAndSettled(s, raised);
    const after = charged(s);
    expect(after.total).toBeGreaterThan(0.3 + before.max);
    expect(after.total).toBeLessThanOrEqual(0.8 + after.over);
    expect(await isPausedInStatus(s)).toBe(true);
  });
});

import type { Kysely, Transaction } from 'kysely';
import { budgetSpend } from '../store/budget.js';
import type { Database } from '../store/types.js';
import { budgetDay } from '../stats/budget.js';
import type { BudgetFacts } from './planner.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

/** A campaign's budget with its spending, as the dial loop and explain read it; null without a budget. */
export async function readBudgetFacts(db: Kysely<Database> | Transaction<Database>, c: Pick<RuntimeCampaign, 'id' | 'timezone' | 'config'>, now: number): Promise<BudgetFacts | null> {
  const budget = c.config.budget;
  if (!budget) return null;
  const day = budgetDay(c.timezone, now);
  return { budget, spend: await budgetSpend(db, c.id, day.start, now), extra: 0, dayEnds: day.end };
}

// A budgeted campaign on the dashboard: its card shows spent / remaining / projected (and
// today's spending against a daily cap), the overview's row the spending under the state,
// and a campaign a cap holds reads `paused (budget)` in both, as in `status`.
import { describe, expect, it } from 'vitest';
import { CARDS_UP_TO } from '../../src/dashboard/render-overview.js';
import type { BudgetStatus, CampaignStatus } from '../../src/status/types.js';
import { campaignStatus, campaignsPage } from '../helpers/dashboard-campaigns.js';

const campaign = (name: string, budget?: BudgetStatus): CampaignStatus => campaignStatus(name, budget ? { budget } : {});
const page = campaignsPage;

const spending: BudgetStatus = { max_cost: 50, max_cost_per_day: 10, spent: 12.5, spent_today: 3.25, remaining: 37.5, projected: 1.8, paused: false };
const held: BudgetStatus = { max_cost: 2, max_cost_per_day: null, spent: 1.95, spent_today: 1.95, remaining: 0.05, projected: 1.8, paused: true };

describe('dashboard: budgets', () => {
  it('the card shows spent of the cap, what is left, today against the daily cap and the projected cost', () => {
    const text = page([campaign('b', spending)]);
    expect(text).toContain('<h3>Budget</h3>');
    expect(text).toMatch(/<b class="spent">12\.50<\/b> of 50\.00 spent · <span class="remaining">37\.50<\/span> left/);
    expect(text).toContain('today 3.25 of 10.00');
    expect(text).toContain('projected <span class="projected">1.80</span> for the leads still to call');
    expect(text).toContain('<span class="state st-running">running</span>');
    expect(text).not.toContain('paused (budget)');
  });

  it('a campaign a cap holds reads paused (budget) on its card, with how to resume', () => {
    const text = page([campaign('b', held)]);
    expect(text).toContain('<span class="state st-paused">paused (budget)</span>');
    expect(text).toContain('raise the cap in the campaign file to resume');
  });

  it('a campaign without a budget shows no budget', () => {
    expect(page([campaign('plain')])).not.toContain('Budget');
  });

  it('the overview row shows paused (budget) and the spending under the state', () => {
    const many = [campaign('held', held), campaign('daily', { ...spending, max_cost: null, remaining: null }), ...Array.from({ length: CARDS_UP_TO }, (_, i) => campaign(`c${i}`))];
    const text = page(many);
    const row = (name: string): string => text.match(new RegExp(`<tr class="c-row[^"]*" data-campaign="${name}"[\\s\\S]*?</tr>`))![0];
    expect(row('held')).toContain('<span class="state st-paused">paused (budget)</span> <small class="budget">1.95 / 2.00</small>');
    expect(row('daily')).toContain('<small class="budget">3.25 / 10.00 today</small>');
    expect(row('c0')).not.toContain('class="budget"');
  });
});

import type { CampaignStatus } from '../status/types.js';
import { meter } from './charts.js';
import { html, type Html } from './html.js';

// A campaign's budget on the dashboard (README, "Budgets"): the same figures as `status`
// (spent, remaining, projected, today), and `paused (budget)` where a cap holds it.

const money = (n: number): string => n.toFixed(2);

/** The state as a person reads it: a running campaign that a budget cap holds is `paused (budget)`. */
export function stateLabel(c: CampaignStatus): string {
  return c.state === 'running' && c.budget?.paused ? 'paused (budget)' : c.state;
}

/** The state badge: a budget pause is coloured as a pause. */
export function stateBadge(c: CampaignStatus): Html {
  const label = stateLabel(c);
  return html`<span class="state st-${label === c.state ? c.state : 'paused'}">${label}</span>`;
}

/** The card's budget cell; nothing without a budget. */
export function renderBudget(c: CampaignStatus): Html | '' {
  const b = c.budget;
  if (!b) return '';
  const total =
    b.max_cost === null
      ? html`<p><b>${money(b.spent)}</b> spent</p>`
      : html`<p><b class="spent">${money(b.spent)}</b> of ${money(b.max_cost)} spent · <span class="remaining">${money(b.remaining ?? 0)}</span> left</p>${meter(b.spent, b.max_cost, `${money(b.spent)} spent of ${money(b.max_cost)}`)}`;
  const today = b.max_cost_per_day === null ? '' : html`<p>today ${money(b.spent_today)} of ${money(b.max_cost_per_day)}</p>`;
  const held = b.paused ? html`<p class="problem">paused (budget): raise the cap in the campaign file to resume${b.max_cost_per_day === null ? '' : "; a daily cap also lets calls through again at the campaign's midnight"}</p>` : '';
  return html`<div class="cell budget"><h3>Budget</h3>${total}${today}<p><small>projected <span class="projected">${money(b.projected)}</span> for the leads still to call</small></p>${held}</div>`;
}

/** The overview's short budget line under the state: spent of the cap. */
export function budgetNote(c: CampaignStatus): Html | '' {
  const b = c.budget;
  if (!b) return '';
  const cap = b.max_cost ?? b.max_cost_per_day;
  const spent = b.max_cost === null ? b.spent_today : b.spent;
  return html` <small class="budget">${money(spent)}${cap === null ? '' : ` / ${money(cap)}`}${b.max_cost === null ? ' today' : ''}</small>`;
}

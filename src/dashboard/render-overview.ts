import type { CampaignStatus } from '../status/types.js';
import { pct, stackedBar } from './charts.js';
import { html, type Html } from './html.js';
import { budgetNote, stateBadge } from './render-budget.js';
import { leadSegments, windowText } from './render-card.js';
import { COLUMNS, FILTERS, finishedOf, selectCampaigns, viewQuery, type FilterKey, type SortKey, type View } from './view.js';
import { spokenTime } from './when.js';

// Many campaigns at a glance: one compact row each (name, state, window, live/limit,
// progress, success rate, finish estimate, problem), sortable by any column, filtered by
// the links above, each row opening its card beneath it. Every link is a view (view.ts).

/** Up to this many campaigns the page shows their cards; beyond, the overview. */
export const CARDS_UP_TO = 6;

const COLUMN_COUNT = Object.keys(COLUMNS).length;

export function renderOverview(campaigns: readonly CampaignStatus[], view: View, now: number, card: (c: CampaignStatus) => Html): Html {
  const shown = selectCampaigns(campaigns, view);
  const link = (change: Partial<View>): string => `/${viewQuery({ ...view, ...change })}`;
  const filters = (Object.keys(FILTERS) as FilterKey[]).map((key) => {
    const n = campaigns.filter(FILTERS[key].test).length;
    const current = key === view.show;
    return html`<a href="${link({ show: key, open: null })}" class="filter f-${key}${n > 0 && key === 'problems' ? ' alert' : ''}"${current ? html` aria-current="page"` : ''}>${FILTERS[key].label} <b>${n}</b></a>`;
  });
  const headings = (Object.keys(COLUMNS) as SortKey[]).map((key) => {
    const current = key === view.sort;
    const desc = current && !view.desc;
    return html`<th${current ? html` aria-sort="${view.desc ? 'descending' : 'ascending'}"` : ''}><a href="${link({ sort: key, desc, open: null })}">${COLUMNS[key].label}${current ? (view.desc ? ' ▼' : ' ▲') : ''}</a></th>`;
  });
  const rows = shown.map((c) => {
    const opened = c.name === view.open;
    const href = `${link({ open: opened ? null : c.name })}${opened ? '' : '#open'}`;
    return html`<tr class="c-row${c.problem ? ' has-problem' : ''}${opened ? ' opened' : ''}" data-campaign="${c.name}" data-href="${href}"${opened ? html` id="open"` : ''}>${renderCells(c, href, now)}</tr>${opened ? html`<tr class="card-row"><td colspan="${COLUMN_COUNT}">${card(c)}</td></tr>` : ''}`;
  });
  return html`<section class="overview" data-count="${campaigns.length}">
<nav class="filters" aria-label="Which campaigns">${filters}</nav>
<table class="overview-table"><thead><tr>${headings}</tr></thead><tbody>${rows}</tbody></table>
${shown.length === 0 ? html`<p class="none">No campaign is ${FILTERS[view.show].label.toLowerCase()} right now.</p>` : ''}</section>`;
}

function renderCells(c: CampaignStatus, href: string, now: number): Html {
  const finished = finishedOf(c);
  const segments = leadSegments(c);
  return html`<td class="name"><a href="${href}">${c.name}</a></td>
<td>${stateBadge(c)}${budgetNote(c)}</td>
<td class="window">${windowText(c, now)}</td>
<td class="num live-limit"><b>${c.live_calls}</b> / ${c.max_calls_in_parallel}</td>
<td class="progress">${stackedBar(segments, `lead states of ${c.name}`)}<span>${pct(finished, c.leads.total)}</span></td>
<td class="num success">${c.success_rate === null ? '–' : pct(c.success_rate, 1)}</td>
<td class="finish">${finishText(c, now)}</td>
<td class="problem">${c.problem ?? ''}</td>`;
}

function finishText(c: CampaignStatus, now: number): Html | string {
  if (c.state === 'completed') return 'done';
  if (c.leads.total === 0) return 'no leads';
  if (c.estimated_finish_at) return spokenTime(c.estimated_finish_at, c.window.timezone, now);
  return c.leads.pending + c.leads.calling + c.leads.retry_scheduled === 0 ? 'done' : '–';
}

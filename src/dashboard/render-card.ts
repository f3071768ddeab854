import type { CampaignStatus } from '../status/types.js';
import { renderBudget, stateBadge } from './render-budget.js';
import { renderCallbacks } from './render-callbacks.js';
import { renderVariants } from './render-variants.js';
import { fmt, hourColumns, legend, meter, pct, stackedBar, type Segment } from './charts.js';
import { html, type Html } from './html.js';
import { finishedOf } from './view.js';
import { spokenTime } from './when.js';

// One campaign drawn in full: its card (all of it when there are a few campaigns, or
// opened under its row of the overview), and the pieces the overview's row shares.

export interface CardContext {
  /** Attempts per hour over the last day, oldest first. */
  hours: number[];
  /** Start of the first hour (epoch ms). */
  since: number;
  /** When the report was taken (epoch ms). */
  now: number;
  csrf: string;
  /** The view's query string, for the page a Pause or Resume returns to. */
  back: string;
}

/** How many of leadSegments' last segments are active states; those before are final (the outcomes). */
const ACTIVE_SEGMENTS = 3;

export function leadSegments(c: CampaignStatus): Segment[] {
  const l = c.leads;
  return [
    { label: 'completed', value: l.completed, cls: 's-completed' },
    { label: 'max retries', value: l.reached_max_retries, cls: 's-maxed' },
    { label: 'invalid', value: l.invalid, cls: 's-invalid' },
    { label: 'suppressed', value: l.suppressed, cls: 's-suppressed' },
    { label: 'cancelled', value: l.cancelled, cls: 's-cancelled' },
    // Only campaigns with on_result move_to rules have moved leads: no empty entry elsewhere.
    ...(l.moved > 0 ? [{ label: 'moved', value: l.moved, cls: 's-moved' }] : []),
    { label: 'calling', value: l.calling, cls: 's-calling' },
    { label: 'retry scheduled', value: l.retry_scheduled, cls: 's-retry' },
    { label: 'pending', value: l.pending, cls: 's-pending' },
  ];
}

export function renderCard(c: CampaignStatus, ctx: CardContext): Html {
  const l = c.leads;
  const finished = finishedOf(c);
  const segments = leadSegments(c);
  // The final states first (moved only where there are some), then the three active ones.
  const outcomes = segments.slice(0, -ACTIVE_SEGMENTS);
  const today = ctx.hours.reduce((n, v) => n + v, 0);
  const action = c.state === 'running' ? 'pause' : c.state === 'paused' || c.state === 'stopped' ? 'resume' : null;
  return html`<article class="campaign" data-campaign="${c.name}">
<header><h2>${c.name}</h2> ${stateBadge(c)}${c.problem ? html` <span class="problem">${c.problem}</span>` : ''}</header>
<div class="row">
<div class="cell"><h3>Window</h3><p class="window ${c.window.open ? 'ok' : 'muted'}">${windowText(c, ctx.now)}</p></div>
<div class="cell"><h3>Live calls</h3><p><b class="live">${c.live_calls}</b> / ${c.max_calls_in_parallel}</p>${meter(c.live_calls, c.max_calls_in_parallel, `${c.live_calls} live calls of ${c.max_calls_in_parallel}`)}</div>
${renderBudget(c)}
${renderCallbacks(c)}
<div class="cell wide"><h3>Attempts per hour, last 24 h <small>(${fmt(today)})</small></h3>${hourColumns(ctx.hours, ctx.since, `attempts per hour of ${c.name}`)}</div>
</div>
<h3>Lead progress <small><span class="finished">${fmt(finished)}</span> of ${fmt(l.total)} finished (${pct(finished, l.total)})${c.estimated_finish_at ? html` · done by about ${spokenTime(c.estimated_finish_at, c.window.timezone, ctx.now)}` : ''}</small></h3>
${stackedBar(segments, `lead states of ${c.name}`)}${legend(segments.slice(-ACTIVE_SEGMENTS))}
<h3>Outcomes <small>${c.success_rate === null ? 'none yet' : `success rate ${pct(c.success_rate, 1)}`}${l.confirming > 0 ? ` · ${fmt(l.confirming)} awaiting confirmation` : ''}</small></h3>
${finished > 0 ? stackedBar(outcomes, `outcomes of ${c.name}`) : ''}${legend(outcomes)}
${renderVariants(c)}
<footer class="actions">${action ? html`<form method="post" action="/dashboard/campaigns/${action}"><input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="campaign" value="${c.name}"><input type="hidden" name="back" value="${ctx.back}"><button type="submit" class="${action}">${action === 'pause' ? 'Pause' : 'Resume'}</button></form>` : ''}<a class="download" href="/dashboard/results.csv?campaign=${encodeURIComponent(c.name)}" download>Results CSV</a></footer>
</article>`;
}

/** The window as said: "open, closes Thu 23:59 New York", "closed, opens Mon 09:00 Berlin". */
export function windowText(c: CampaignStatus, now: number): Html {
  const w = c.window;
  if (w.open === null) return html`unknown <small>(${w.timezone ?? 'zone not known yet'})</small>`;
  const at = w.open ? w.closes_at : w.next_open_at;
  const when = at ? spokenTime(at, w.timezone, now) : null;
  if (w.open) return when ? html`<b>open</b>, closes ${when}` : html`<b>open</b> around the clock`;
  return when ? html`<b>closed</b>, opens ${when}` : html`<b>closed</b>, never opens again`;
}

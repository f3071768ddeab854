import type { HookStatus } from '../hooks/status.js';
import type { CampaignStatus, DaemonStatus } from '../status/types.js';
import { hourColumns, legend, meter, pct, stackedBar, type Segment } from './charts.js';
import type { DashboardData } from './data.js';
import { html, type Html } from './html.js';

// The dashboard page, server-rendered. Every value goes through `html` (escaped); the
// client script only swaps in fragments rendered here and adds the viewer's local times.

export const ASSET_SCRIPT = '/dashboard/app.js';
export const ASSET_STYLE = '/dashboard/style.css';
export const STATUS_JSON = '/dashboard/status.json';

const fmt = (n: number): string => n.toLocaleString('en');

function layout(title: string, body: Html, csrf?: string): string {
  return `<!doctype html>\n${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${csrf ? html`<meta name="csrf-token" content="${csrf}">` : ''}<title>${title}</title><link rel="stylesheet" href="${ASSET_STYLE}"></head><body>${body}<script src="${ASSET_SCRIPT}" defer></script></body></html>`.text}`;
}

export interface PageOptions {
  csrf: string;
  tokenRequired: boolean;
  /** The search box's value and its result, when a number was searched for. */
  search?: { query: string; result: Html };
}

/** The whole dashboard. */
export function renderPage(data: DashboardData, opts: PageOptions): string {
  const body = html`<header class="top"><h1>campaignd</h1><div id="daemon" aria-live="polite">${renderDaemon(data)}</div>${opts.tokenRequired ? html`<form method="post" action="/dashboard/logout" class="logout"><input type="hidden" name="csrf" value="${opts.csrf}"><button type="submit">Sign out</button></form>` : ''}</header>
<section class="search"><form method="get" action="/" role="search"><label for="phone">Find a lead by phone number</label> <input id="phone" name="phone" type="search" inputmode="tel" placeholder="+15551234567" value="${opts.search?.query ?? ''}"> <button type="submit">Explain</button></form>${opts.search ? html`<div id="search-result">${opts.search.result}</div>` : ''}</section>
<main id="campaigns" data-refresh="${STATUS_JSON}">${renderCampaigns(data, opts.csrf)}</main>
<footer><span id="updated" data-at="${data.generated_at}">updated ${data.generated_at}</span> · refreshes every 2 s</footer>`;
  return layout('campaignd dashboard', body, opts.csrf);
}

/** The daemon strip: instance, API state, rate budget. */
export function renderDaemon(data: DashboardData): Html {
  const d: DaemonStatus = data.status.daemon;
  const r = d.api_requests;
  return html`<dl class="facts">
<div><dt>Daemon</dt><dd class="${d.running ? 'ok' : 'bad'}">${d.running ? 'running' : 'not running'}${d.pid !== null ? html` · pid <b>${d.pid}</b>` : ''}${d.hostname ? html` on ${d.hostname}` : ''} · v${d.version}</dd></div>
<div><dt>API</dt><dd class="${d.api === 'ok' ? 'ok' : 'bad'}">${d.api}${d.api_detail ? html` <small>${d.api_detail}</small>` : ''}</dd></div>
<div><dt>Rate budget</dt><dd>${fmt(r.sent)} requests sent · ${fmt(r.rate_limited)} × 429 · waited ${r.budget_wait_seconds} s <small>(limit ${data.rate_limit.requests_per_minute}/min, ${data.rate_limit.burst} per ${data.rate_limit.burst_window_seconds} s)</small></dd></div>
<div><dt>Live calls</dt><dd${d.max_calls_in_parallel !== null && d.live_calls >= d.max_calls_in_parallel ? html` class="bad" title="the daemon-wide max_calls_in_parallel is reached"` : ''}><b class="daemon-live">${fmt(d.live_calls)}</b>${d.max_calls_in_parallel !== null ? html` / ${fmt(d.max_calls_in_parallel)} <small>(daemon-wide limit)</small>` : ''} over ${data.status.campaigns.length} campaign${data.status.campaigns.length === 1 ? '' : 's'}</dd></div>
${data.status.hooks ? renderBacklog(data.status.hooks) : ''}</dl>${d.problems.length > 0 ? html`<ul class="problems">${d.problems.map((p) => html`<li>${typeof p === 'string' ? p : JSON.stringify(p)}</li>`)}</ul>` : ''}`;
}

/** Results hooks: what waits to be delivered (status's `hooks`: only hooks with a backlog or disabled). */
function renderBacklog(hooks: readonly HookStatus[]): Html {
  const waiting = hooks.reduce((n, h) => n + h.backlog, 0);
  return html`<div class="backlog"><dt>Results backlog</dt><dd class="${hooks.some((h) => h.disabled || h.failing > 0) ? 'bad' : ''}">${
    hooks.length === 0
      ? 'none waiting'
      : html`<b>${fmt(waiting)}</b> undelivered${hooks.map(
          (h) =>
            html` · <span class="hook">${h.url}: ${h.disabled ? html`disabled since ${h.disabled.at}` : html`${fmt(h.backlog)}${h.oldest_undelivered_seconds !== null ? `, oldest ${h.oldest_undelivered_seconds} s` : ''}${h.failing > 0 ? `, ${fmt(h.failing)} failing` : ''}`}</span>`,
        )}`
  }</dd></div>`;
}

/** Every campaign as a card. */
export function renderCampaigns(data: DashboardData, csrf: string): Html {
  if (data.status.campaigns.length === 0) return html`<p class="none">No campaigns yet: add a campaign file to campaigns_dir and send SIGHUP.</p>`;
  const since = Date.parse(data.attempts_since);
  return html`${data.status.campaigns.map((c) => renderCampaign(c, data.attempts_per_hour[c.name] ?? [], since, csrf))}`;
}

function leadSegments(c: CampaignStatus): Segment[] {
  const l = c.leads;
  return [
    { label: 'completed', value: l.completed, cls: 's-completed' },
    { label: 'max retries', value: l.reached_max_retries, cls: 's-maxed' },
    { label: 'invalid', value: l.invalid, cls: 's-invalid' },
    { label: 'suppressed', value: l.suppressed, cls: 's-suppressed' },
    { label: 'calling', value: l.calling, cls: 's-calling' },
    { label: 'retry scheduled', value: l.retry_scheduled, cls: 's-retry' },
    { label: 'pending', value: l.pending, cls: 's-pending' },
  ];
}

function renderCampaign(c: CampaignStatus, hours: number[], since: number, csrf: string): Html {
  const l = c.leads;
  const finished = l.completed + l.reached_max_retries + l.invalid + l.suppressed;
  const segments = leadSegments(c);
  const outcomes = segments.slice(0, 4);
  const today = hours.reduce((n, v) => n + v, 0);
  const action = c.state === 'running' ? 'pause' : c.state === 'paused' || c.state === 'stopped' ? 'resume' : null;
  return html`<article class="campaign" data-campaign="${c.name}">
<header><h2>${c.name}</h2> <span class="state st-${c.state}">${c.state}</span>${c.problem ? html` <span class="problem">${c.problem}</span>` : ''}</header>
<div class="row">
<div class="cell"><h3>Window</h3>${renderWindow(c)}</div>
<div class="cell"><h3>Live calls</h3><p><b class="live">${c.live_calls}</b> / ${c.max_calls_in_parallel}</p>${meter(c.live_calls, c.max_calls_in_parallel, `${c.live_calls} live calls of ${c.max_calls_in_parallel}`)}</div>
<div class="cell wide"><h3>Attempts per hour, last 24 h <small>(${fmt(today)})</small></h3>${hourColumns(hours, since, `attempts per hour of ${c.name}`)}</div>
</div>
<h3>Lead progress <small><span class="finished">${fmt(finished)}</span> of ${fmt(l.total)} finished (${pct(finished, l.total)})${c.estimated_finish_at ? html` · done by about <time datetime="${c.estimated_finish_at}" data-local>${c.estimated_finish_at.replace('T', ' ')}</time>` : ''}</small></h3>
${stackedBar(segments, `lead states of ${c.name}`)}${legend(segments.slice(4))}
<h3>Outcomes <small>${c.success_rate === null ? 'none yet' : `success rate ${pct(c.success_rate, 1)}`}${l.confirming > 0 ? ` · ${fmt(l.confirming)} awaiting confirmation` : ''}</small></h3>
${finished > 0 ? stackedBar(outcomes, `outcomes of ${c.name}`) : ''}${legend(outcomes)}
<footer class="actions">${action ? html`<form method="post" action="/dashboard/campaigns/${action}"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="campaign" value="${c.name}"><button type="submit" class="${action}">${action === 'pause' ? 'Pause' : 'Resume'}</button></form>` : ''}<a class="download" href="/dashboard/results.csv?campaign=${encodeURIComponent(c.name)}" download>Results CSV</a></footer>
</article>`;
}

function renderWindow(c: CampaignStatus): Html {
  const w = c.window;
  const zone = w.timezone ?? 'zone not known yet';
  if (w.open === null) return html`<p class="window muted">unknown <small>(${zone})</small></p>`;
  const at = w.open ? w.closes_at : w.next_open_at;
  const when = at ? html`<time datetime="${at}" data-local>${at.replace('T', ' ')}</time>` : null;
  const text = w.open ? (when ? html`<b>open</b>, closes ${when}` : html`<b>open</b> around the clock`) : when ? html`<b>closed</b>, opens ${when}` : html`<b>closed</b>, never opens again`;
  return html`<p class="window ${w.open ? 'ok' : 'muted'}">${text} <small>${zone}</small></p>`;
}

/** The sign-in page shown to a request without a valid session. */
export function renderLogin(problem?: string): string {
  return layout(
    'campaignd dashboard: sign in',
    html`<main class="login"><h1>campaignd</h1><form method="post" action="/dashboard/login"><label for="token">Dashboard token</label><input id="token" name="token" type="password" autocomplete="current-password" required autofocus>${problem ? html`<p class="problem" role="alert">${problem}</p>` : ''}<button type="submit">Sign in</button></form><p class="muted">The token is the value of the environment variable named by <code>http.dashboard_token_env</code>.</p></main>`,
  );
}

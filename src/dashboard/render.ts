import type { HookStatus } from '../hooks/status.js';
import type { CampaignStatus, DaemonStatus } from '../status/types.js';
import type { AccountStatus } from '../status/accounts.js';
import { renderCard } from './render-card.js';
import { CARDS_UP_TO, renderOverview } from './render-overview.js';
import { DEFAULT_VIEW, viewQuery, type View } from './view.js';
import type { DashboardData } from './data.js';
import { html, type Html } from './html.js';
import { UPLOAD_LIMIT_BYTES, UPLOAD_PATH } from './upload.js';

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
  /** The overview's filter, order and opened card (the page's query string). */
  view?: View;
  tokenRequired: boolean;
  /** The search box's value and its result, when a number was searched for. */
  search?: { query: string; result: Html };
}

/** The whole dashboard. */
export function renderPage(data: DashboardData, opts: PageOptions): string {
  const body = html`<header class="top"><h1>campaignd</h1><div id="daemon" aria-live="polite">${renderDaemon(data)}</div>${opts.tokenRequired ? html`<form method="post" action="/dashboard/logout" class="logout"><input type="hidden" name="csrf" value="${opts.csrf}"><button type="submit">Sign out</button></form>` : ''}</header>
<section class="search"><form method="get" action="/" role="search"><label for="phone">Find a lead by phone number</label> <input id="phone" name="phone" type="search" inputmode="tel" placeholder="+15551234567" value="${opts.search?.query ?? ''}"> <button type="submit">Explain</button></form>${opts.search ? html`<div id="search-result">${opts.search.result}</div>` : ''}</section>
${renderUpload(data.status.campaigns.map((c) => c.name))}
<main id="campaigns" class="${data.status.campaigns.length > CARDS_UP_TO ? 'many' : 'few'}" data-refresh="${STATUS_JSON}${viewQuery(opts.view ?? DEFAULT_VIEW)}">${renderCampaigns(data, opts.csrf, opts.view)}</main>
<footer><span id="updated" data-at="${data.generated_at}">updated ${data.generated_at.slice(11, 19)} UTC</span> · refreshes every 2 s</footer>`;
  return layout('campaignd dashboard', body, opts.csrf);
}

/**
 * Adding leads from a file: outside the campaigns (which the refresh redraws every 2 s, and
 * a chosen file with them). The page's script sends the file (asset-script.ts) and writes
 * the import's summary below the form.
 */
function renderUpload(campaigns: string[]): Html {
  if (campaigns.length === 0) return html``;
  return html`<section class="upload"><form id="upload" method="post" action="${UPLOAD_PATH}" enctype="multipart/form-data" data-limit="${UPLOAD_LIMIT_BYTES}"><label for="upload-file">Add leads from a file</label> <input id="upload-file" name="file" type="file" accept=".csv,.txt,.tsv,.xlsx,.xlsm,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" required> <label for="upload-campaign">to</label> <select id="upload-campaign" name="campaign">${campaigns.map((name) => html`<option>${name}</option>`)}</select> <button type="submit">Import</button> <small class="muted">CSV or .xlsx, up to ${UPLOAD_LIMIT_BYTES / 1024 / 1024} MB, imported as <code>campaignd leads import</code> does</small></form><pre id="upload-result" role="status" hidden></pre></section>`;
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
${data.status.hooks ? renderBacklog(data.status.hooks) : ''}</dl>${renderAccounts(data.status.accounts)}${d.problems.length > 0 ? html`<ul class="problems">${d.problems.map((p) => html`<li>${typeof p === 'string' ? p : JSON.stringify(p)}</li>`)}</ul>` : ''}`;
}

/** Several accounts (README, "Many accounts"): one row each, its instance, its API state and its requests. */
function renderAccounts(accounts: readonly AccountStatus[] | undefined): Html | string {
  if (!accounts || accounts.length < 2) return '';
  const rows = accounts.map(
    (a) =>
      html`<tr><td>${a.name}</td><td>pid ${a.pid} on ${a.hostname}</td><td class="${a.api === 'ok' ? 'ok' : 'bad'}">${a.api}${a.api_detail ? html` <small>${a.api_detail}</small>` : ''}</td><td>${fmt(a.requests.sent)}</td><td>${fmt(a.requests.rate_limited)}</td></tr>`,
  );
  return html`<table class="accounts"><thead><tr><th>Account</th><th>Instance</th><th>API</th><th>Requests</th><th>429s</th></tr></thead><tbody>${rows}</tbody></table>`;
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

/**
 * The campaigns: as cards when there are a few (up to CARDS_UP_TO), else as the overview,
 * one row each, `view` choosing which rows, their order and the one opened as its card.
 */
export function renderCampaigns(data: DashboardData, csrf: string, view: View = DEFAULT_VIEW): Html {
  if (data.status.campaigns.length === 0) return html`<p class="none">No campaigns yet: add a campaign file to campaigns_dir and send SIGHUP.</p>`;
  const now = Date.parse(data.generated_at);
  const card = (c: CampaignStatus): Html => renderCard(c, { hours: data.attempts_per_hour[c.name] ?? [], since: Date.parse(data.attempts_since), now, csrf, back: viewQuery(view) });
  if (data.status.campaigns.length <= CARDS_UP_TO) return html`${data.status.campaigns.map(card)}`;
  return renderOverview(data.status.campaigns, view, now, card);
}

/** The sign-in page shown to a request without a valid session. */
export function renderLogin(problem?: string): string {
  return layout(
    'campaignd dashboard: sign in',
    html`<main class="login"><h1>campaignd</h1><form method="post" action="/dashboard/login"><label for="token">Dashboard token</label><input id="token" name="token" type="password" autocomplete="current-password" required autofocus>${problem ? html`<p class="problem" role="alert">${problem}</p>` : ''}<button type="submit">Sign in</button></form><p class="muted">The token is the value of the environment variable named by <code>http.dashboard_token_env</code>.</p></main>`,
  );
}

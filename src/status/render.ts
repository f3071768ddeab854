import { DateTime } from 'luxon';
import { renderHookLines } from '../hooks/status.js';
import { renderAccountLines } from './accounts.js';
import { formatIn } from '../time/duration-format.js';
import { statusProblems } from './problems.js';
import { renderBudgetLines } from './render-budget.js';
import { renderVariantLines } from './render-variants.js';
import type { CampaignStatus, StatusReport } from './types.js';

export interface RenderOptions {
  /** The instant the report was taken, for "in 3 h 12 min". */
  now: number;
  /** ANSI colours (a terminal that wants them). */
  color: boolean;
}

type Paint = (code: string, text: string) => string;

/** MOVED is shown only when a campaign has moved leads; the last, PREDIAL, only when a campaign has a pre-dial check. */
const COLUMNS = ['CAMPAIGN', 'STATE', 'WINDOW', 'LIVE', 'PENDING', 'CALLING', 'RETRY', 'DONE', 'MAXED', 'INVALID', 'SUPPR', 'CANCEL', 'MOVED', 'TOTAL', 'TODAY', 'SUCCESS', 'FINISH', 'PREDIAL'] as const;
/** Columns whose cells are right-aligned numbers. */
const NUMERIC = new Set(['LIVE', 'PENDING', 'CALLING', 'RETRY', 'DONE', 'MAXED', 'INVALID', 'SUPPR', 'CANCEL', 'MOVED', 'TOTAL', 'TODAY', 'SUCCESS']);

/** The human form of `campaignd status`: a header line, one table row per campaign, then problems. */
export function renderStatus(report: StatusReport, options: RenderOptions): string {
  const paint: Paint = options.color ? (code, text) => `\u001b[${code}m${text}\u001b[0m` : (_code, text) => text;
  const lines = [daemonLine(report, options.now, paint)];
  if (report.daemon.heartbeat_at) lines.push(apiRequestsLine(report));
  if (report.daemon.instances.length > 1 || (report.daemon.running && report.daemon.active_pid === null)) lines.push(instancesLine(report, options.now));
  lines.push('');
  if (report.campaigns.length === 0) {
    lines.push('no campaigns in the database yet: start "campaignd run" or "campaignd leads import"');
  } else {
    // MOVED only when a campaign moved leads (on_result), PREDIAL only when a campaign has a
    // pre-dial check: the table stays as narrow as it can.
    const moved = report.campaigns.some((c) => c.leads.moved > 0);
    const predial = report.campaigns.some((c) => c.predial);
    const shown = COLUMNS.map((h, i) => ({ h, i })).filter(({ h }) => (h !== 'MOVED' || moved) && (h !== 'PREDIAL' || predial));
    const columns = shown.map((x) => x.h);
    // Campaigns of one zone share their window's times: each written once (luxon's parse
    // and format were ~13 ms of a table of 100 campaigns).
    const written = new Map<string, string>();
    const local = (iso: string): string => {
      let text = written.get(iso);
      if (text === undefined) written.set(iso, (text = localTime(iso, options.now)));
      return text;
    };
    const rows = report.campaigns.map((c) => {
      const cells = campaignCells(c, options.now, local);
      return shown.map((x) => cells[x.i] ?? '');
    });
    const widths = columns.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const layout = (cells: readonly string[]): string[] => cells.map((cell, i) => (NUMERIC.has(columns[i] ?? '') ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)));
    lines.push(paint('1', layout(columns).join('  ').trimEnd()));
    report.campaigns.forEach((c, i) => {
      const cells = layout(rows[i] ?? []);
      cells[1] = paint(stateColour(c), cells[1] ?? '');
      if (c.window.open !== null) cells[2] = paint(c.window.open ? '32' : '2', cells[2] ?? '');
      lines.push(cells.join('  ').trimEnd());
    });
  }
  const predialLines = report.campaigns.filter((c) => c.predial?.last_failure).map((c) => predialLine(c, options.now));
  if (predialLines.length) lines.push('', ...predialLines);
  const budgetLines = renderBudgetLines(report.campaigns);
  if (budgetLines.length) lines.push('', ...budgetLines);
  for (const c of report.campaigns) if (c.variants) lines.push('', ...renderVariantLines(c));
  const callbackLines = report.campaigns
    .filter((c) => c.callbacks && c.callbacks.scheduled + c.callbacks.placed + c.callbacks.refused + c.callbacks.dropped > 0)
    .map((c) => `${c.name}: callbacks ${c.callbacks!.scheduled} scheduled · ${c.callbacks!.placed} placed · ${c.callbacks!.refused} refused · ${c.callbacks!.dropped} dropped`);
  if (callbackLines.length) lines.push('', ...callbackLines);
  if (report.hooks?.length) lines.push('', ...renderHookLines(report.hooks));
  const accountLines = renderAccountLines(report.accounts);
  if (accountLines.length) lines.push('', ...accountLines);
  const problems = statusProblems(report);
  if (problems.length) {
    lines.push('');
    for (const p of problems) lines.push(paint('31', `! ${p}`));
  }
  return `${lines.join('\n')}\n`;
}

function daemonLine(report: StatusReport, now: number, paint: Paint): string {
  const d = report.daemon;
  const parts: string[] = [];
  if (d.running) {
    parts.push(`${paint('32', 'daemon running')} (pid ${d.pid}${d.hostname ? ` on ${d.hostname}` : ''}, v${d.version})`);
    // A rejected token is said once, with its remedy, among the problems below.
    const api = d.api === 'ok' ? paint('32', 'API ok') : d.api === 'token-rejected' ? paint('31', 'API token not working (see below)') : paint('31', `API ${d.api}${d.api_detail ? `: ${d.api_detail}` : ''}`);
    parts.push(api);
    if (d.heartbeat_at) parts.push(`heartbeat ${ago(now - Date.parse(d.heartbeat_at))}`);
    parts.push(liveCallsText(d));
  } else if (d.heartbeat_at) {
    parts.push(`${paint('33', 'daemon not running')} (last seen ${ago(now - Date.parse(d.heartbeat_at))}, pid ${d.pid}${d.hostname ? ` on ${d.hostname}` : ''}, v${d.version})`);
  } else {
    parts.push(`${paint('33', 'daemon not running')} (never started on this database; campaignd v${d.version})`);
  }
  return parts.join(' · ');
}

/** Live calls over all campaigns, against the daemon-wide limit when one is set: "live calls 20 / 20" is full. */
function liveCallsText(d: StatusReport['daemon']): string {
  return d.max_calls_in_parallel === null ? `live calls ${d.live_calls}` : `live calls ${d.live_calls} / ${d.max_calls_in_parallel}`;
}

/** Several instances on one PostgreSQL database (docs/design.md §10): which one dials, which stand by. */
function instancesLine(report: StatusReport, now: number): string {
  const d = report.daemon;
  // Several accounts: how many each instance dials (with several active instances every one dials some).
  const dialed = (i: { pid: number; hostname: string }): string => {
    if (!report.accounts || report.accounts.length < 2) return '';
    const n = report.accounts.filter((a) => a.lease_expires_at !== null && a.pid === i.pid && a.hostname === i.hostname).length;
    return `, dials ${n} account${n === 1 ? '' : 's'}`;
  };
  const each = d.instances.map((i) => `${i.role} pid ${i.pid} on ${i.hostname} (heartbeat ${ago(now - Date.parse(i.heartbeat_at))}${dialed(i)})`);
  return `Instances: ${each.join(' · ')}${d.active_pid === null ? ' · none active: a standby takes the lease when it runs out' : ''}`;
}

/** One line of the daemon's requests to the service since it started. */
function apiRequestsLine(report: StatusReport): string {
  const a = report.daemon.api_requests;
  return `API requests: ${a.sent} sent · ${a.rate_limited} answered 429 · ${a.budget_wait_seconds} s waited for the rate budget (since the daemon started)`;
}

function campaignCells(c: CampaignStatus, now: number, local: (iso: string) => string): string[] {
  return [
    c.name,
    c.problem ? `${c.state} (!)` : c.state === 'running' && c.budget?.paused ? 'paused (budget)' : c.state,
    windowCell(c, now, local),
    `${c.live_calls}/${c.max_calls_in_parallel}`,
    String(c.leads.pending),
    String(c.leads.calling),
    String(c.leads.retry_scheduled),
    // A webhook success may still turn out a voicemail: shown apart until the call list says.
    c.leads.confirming > 0 ? `${c.leads.completed} (${c.leads.confirming} confirming)` : String(c.leads.completed),
    String(c.leads.reached_max_retries),
    String(c.leads.invalid),
    String(c.leads.suppressed),
    String(c.leads.cancelled),
    String(c.leads.moved),
    String(c.leads.total),
    String(c.attempts.today),
    c.success_rate === null ? '-' : `${Math.round(c.success_rate * 100)}%`,
    finishCell(c, now, local),
    // The pre-dial check's failures of all checks: a failing check holds the campaign's leads back.
    c.predial ? `${c.predial.failures}/${c.predial.checks} failed` : '-',
  ];
}

/** The last failure of a campaign's pre-dial check, when and why. */
function predialLine(c: CampaignStatus, now: number): string {
  const p = c.predial!;
  const last = p.last_failure!;
  return `${c.name}: pre-dial check failed ${p.failures} of ${p.checks} times; last ${ago(now - Date.parse(last.at))}: ${last.detail}`;
}

function windowCell(c: CampaignStatus, now: number, local: (iso: string) => string): string {
  const w = c.window;
  if (w.open === null) return 'unknown (zone not resolved yet)';
  const zone = w.timezone ?? 'UTC';
  if (w.open) return w.closes_at ? `open until ${local(w.closes_at)} ${zone}` : `open (${zone})`;
  if (!w.next_open_at) return 'closed, no opening ahead';
  const at = Date.parse(w.next_open_at);
  return `closed, opens ${local(w.next_open_at)} ${zone} (${formatIn(at - now)})`;
}

function finishCell(c: CampaignStatus, now: number, local: (iso: string) => string): string {
  if (c.state === 'completed') return 'done';
  if (c.leads.total === 0) return 'no leads';
  if (!c.estimated_finish_at) return c.leads.pending + c.leads.calling + c.leads.retry_scheduled === 0 ? 'done' : '-';
  const at = Date.parse(c.estimated_finish_at);
  // The estimate is in the campaign's zone, as the window is: named, so that it is not read as the reader's.
  return `~${local(c.estimated_finish_at)} ${c.window.timezone ?? 'UTC'} (${formatIn(at - now)})`;
}

/** "Mon 09:00", or "Mon 23 Nov 09:00" when more than six days away, in the instant's own offset. */
export function localTime(iso: string, now: number): string {
  const dt = DateTime.fromISO(iso, { setZone: true });
  if (!dt.isValid) return iso;
  return dt.toMillis() - now > 6 * 86_400_000 ? dt.toFormat('ccc d LLL HH:mm') : dt.toFormat('ccc HH:mm');
}

function ago(ms: number): string {
  if (!Number.isFinite(ms)) return 'at an unknown time';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

function stateColour(c: CampaignStatus): string {
  if (c.problem) return '31';
  if (c.state === 'running') return '32';
  if (c.state === 'completed') return '36';
  return '33';
}

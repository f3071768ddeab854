import { collectAccounts } from './accounts.js';
import { IANAZone } from 'luxon';
import { collectHookStatus } from '../hooks/status.js';
import type { Kysely, Transaction } from 'kysely';
import type { CampaignBudget, CampaignConfig } from '../config/types.js';
import { formatLocal } from '../time/duration-format.js';
import { isOpen, nextClosing, nextOpening, windowFromCampaign, type WindowSpec } from '../time/window.js';
import { campaignCounts, type CampaignCounts } from '../store/counts.js';
import { unconfirmedCountsByCampaign } from '../store/attempts.js';
import type { CampaignRow, Database, DaemonRow, LeadState } from '../store/types.js';
import { campaignActivity, liveCallsByCampaign, type CampaignActivity, type FinishedWindow } from '../store/campaign-activity.js';
import { listCampaigns } from '../store/campaigns.js';
import { predialCountsByCampaign, type PredialCounts } from '../store/predial-counts.js';
import { leaseHolder } from '../store/lease.js';
import { daemonRows } from '../store/daemons.js';
import { collectVariantsByCampaign } from './variants.js';
import { callbackCounts, emptyCallbackCounts, type CallbackCounts } from '../store/callbacks.js';
import { budgetDay, budgetHold, budgetPaused, unitCost, type BudgetSpend } from '../stats/budget.js';
import { budgetSpendByCampaign, noSpend } from '../store/budget.js';
import type { BudgetStatus, CampaignStatus, DaemonStatus, LeadCounts, StatusReport, WindowStatus } from './types.js';

/** A daemon whose heartbeat is older than this is taken for dead. */
export const HEARTBEAT_STALE_MS = 10_000;
const HOUR_MS = 3_600_000;
/**
 * Attempts that finished a lead in the last hour were created at most this long ago: a
 * call lasts minutes and an unknown attempt settles within minutes.
 */
const PACE_LOOKBACK_MS = 3 * HOUR_MS;

export interface CollectOptions {
  now: number;
  /** Only this campaign (the caller checks that it exists). */
  campaign?: string;
  /** This campaignd's version, shown when no daemon has run yet. */
  version: string;
  /** Whether a process with this pid exists on this host. */
  isPidAlive: (pid: number) => boolean;
  /** This host's name: the pid is checked only when the daemon row was written here. */
  hostname?: string;
}

/** Thrown when `campaign` names no campaign in the database. */
export class UnknownCampaignError extends Error {
  constructor(
    readonly campaign: string,
    readonly known: string[],
  ) {
    super(`no campaign named "${campaign}" in the database${known.length ? ` (known: ${known.join(', ')})` : ' (it has no campaigns yet)'}`);
    this.name = 'UnknownCampaignError';
  }
}

/** Reads everything `campaignd status` shows, in one read transaction (a consistent snapshot). */
export async function collectStatus(db: Kysely<Database>, opts: CollectOptions): Promise<StatusReport> {
  return db.transaction().execute(async (trx) => {
    const daemon = await collectDaemon(trx, opts);
    const all = await listCampaigns(trx);
    let rows = all;
    if (opts.campaign !== undefined) {
      rows = all.filter((r) => r.name === opts.campaign);
      if (rows.length === 0) throw new UnknownCampaignError(opts.campaign, all.map((r) => r.name));
      // Another campaign's broken file is not this campaign's problem (nor its exit code).
      const others = all.filter((r) => r.name !== opts.campaign && r.config_file).map((r) => r.config_file as string);
      daemon.problems = daemon.problems.filter((p) => !others.some((file) => problemIsAbout(p, file)));
    }
    const only = opts.campaign !== undefined ? rows[0]?.id : undefined;
    // Each row's settings parsed once, its zone checked once: every figure below reads them.
    const settled = settleAll(rows, opts.now);
    // Every campaign's live calls, even for one CAMPAIGN: the daemon-wide limit counts them all.
    const live = await liveCallsByCampaign(trx);
    daemon.live_calls = [...live.values()].reduce((a, b) => a + b, 0);
    const counts = await campaignCounts(trx, only);
    // Every provisional success, however old: one the engine no longer looks for is no more final.
    const confirming = await unconfirmedCountsByCampaign(trx, 0);
    // "Today" starts at each campaign's own local midnight.
    const activity = await campaignActivity(
      trx,
      settled.map((c) => ({ campaignId: c.row.id, since: c.day.start })),
      { firstSince: opts.now - HOUR_MS, finished: lastHour(opts.now) },
    );
    // Read only when a campaign has a check: a daemon older than the table never wrote one.
    const checked = new Set(settled.filter((c) => c.config?.predial).map((c) => c.row.id));
    const predial = checked.size > 0 ? await predialCountsByCampaign(trx) : new Map<number, PredialCounts>();
    // Read only when a campaign has callbacks: one grouped count over the callbacks index.
    const callbacks = settled.some((c) => c.config?.callbacks) ? await callbackCounts(trx) : new Map<number, CallbackCounts>();
    // Spending and variants: a few grouped reads for all campaigns, not a few per campaign.
    const spend = await budgetSpendByCampaign(trx, settled.filter((c) => c.config?.budget).map((c) => ({ campaignId: c.row.id, dayStart: c.day.start })), opts.now);
    const variants = await collectVariantsByCampaign(trx, settled.map((c) => ({ id: c.row.id, config: c.config })));
    const campaigns: CampaignStatus[] = [];
    for (const c of settled) {
      const id = c.row.id;
      const campaign = collectCampaign(c, opts.now, live.get(id) ?? 0, counts.get(id), activity, spend.get(id));
      campaign.leads.confirming = confirming.get(id) ?? 0;
      if (checked.has(id)) campaign.predial = predialStatus(predial.get(id));
      if (c.config?.callbacks) campaign.callbacks = callbacks.get(id) ?? emptyCallbackCounts();
      const v = variants.get(id);
      if (v) Object.assign(campaign, { variants: v.variants, variants_p_value: v.p_value, variants_significant: v.significant });
      campaigns.push(campaign);
    }
    const hooks = await collectHookStatus(trx, opts.now);
    // Each account and the instance dialing it (README, "Many accounts"); absent before a daemon wrote them.
    const accounts = await collectAccounts(trx, (await daemonRows(trx)).filter((r) => daemonRunning(r, opts)));
    return { daemon, campaigns, ...(hooks.length > 0 ? { hooks } : {}), ...(accounts ? { accounts } : {}) };
  });
}

async function collectDaemon(trx: Transaction<Database>, opts: CollectOptions): Promise<DaemonStatus> {
  const rows: DaemonRow[] = await daemonRows(trx);
  const holder = await leaseHolder(trx);
  const running = (row: DaemonRow) => daemonRunning(row, opts);
  const live = rows.filter(running);
  // On SQLite the one running daemon is active; on PostgreSQL the lease's holder is.
  const roleOf = (row: DaemonRow): 'active' | 'standby' => (holder === undefined || row.instance_id === holder ? 'active' : 'standby');
  const instances = live.map((r) => ({ pid: r.pid, hostname: r.hostname, role: roleOf(r), heartbeat_at: isoUtc(r.heartbeat_at) }));
  const active = live.find((r) => roleOf(r) === 'active');
  // The daemon that matters: the active one, else the freshest heartbeat (older rows are past runs).
  const row = active ?? live[0] ?? rows[0];
  if (!row) {
    return { running: false, pid: null, version: opts.version, api: 'unknown', api_detail: 'no daemon has run on this database yet', token_source: null, hostname: null, started_at: null, heartbeat_at: null, stopped_at: null, problems: [], api_requests: { sent: 0, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: null, instances: [], max_calls_in_parallel: null, live_calls: 0 };
  }
  const isRunning = running(row);
  return {
    running: isRunning,
    pid: row.pid,
    version: row.version,
    // A stopped daemon's last API state is history, not a fact about now.
    api: isRunning ? row.api_status : 'unknown',
    api_detail: isRunning ? row.api_detail : `daemon not running; last known API state: ${row.api_status}${row.api_detail ? ` (${row.api_detail})` : ''}`,
    token_source: row.token_source ?? null,
    hostname: row.hostname,
    started_at: isoUtc(row.started_at),
    heartbeat_at: isoUtc(row.heartbeat_at),
    stopped_at: row.stopped_at === null ? null : isoUtc(row.stopped_at),
    problems: parseProblems(row.problems_json),
    // `?? 0`: a database not yet migrated to 0006 has no such columns.
    api_requests: {
      sent: Number(row.api_requests_sent ?? 0),
      rate_limited: Number(row.api_rate_limited ?? 0),
      budget_wait_seconds: Math.round(Number(row.budget_wait_ms ?? 0) / 100) / 10,
    },
    active_pid: active?.pid ?? null,
    instances,
    // `?? null`: a database not yet migrated to 0011 has no such column.
    max_calls_in_parallel: row.max_calls_in_parallel ?? null,
    live_calls: 0,
  };
}

/** The campaign's zone as stored, if luxon knows it, and the problem when it does not. */
function campaignZone(row: CampaignRow, config: CampaignConfig | undefined): { zone: string | null; zoneProblem: string | null } {
  const stored = row.timezone ?? config?.timezone ?? null;
  // A zone this luxon does not know would make every local-time computation throw.
  // IANAZone.create caches the zone and its validity; isValidZone builds an
  // Intl.DateTimeFormat on every call (~0.15 ms: 15 ms of a report of 100 campaigns).
  const zone = stored !== null && IANAZone.create(stored).isValid ? stored : null;
  return { zone, zoneProblem: stored !== null && zone === null ? `unknown time zone "${stored}"` : null };
}

/** A campaign row with what every figure of it needs: its settings parsed, its zone checked, its day. */
interface SettledCampaign {
  row: CampaignRow;
  /** Undefined when the stored settings cannot be used. */
  config: CampaignConfig | undefined;
  zone: string | null;
  zoneProblem: string | null;
  /**
   * Its day in its zone (UTC when it has none): "today" of its attempts starts at `start`,
   * and a budget's daily cap counts the same day, as the dial loop does.
   */
  day: { start: number; end: number };
  window: WindowStatus;
}

/**
 * Settles each row once. Campaigns of one zone share their day and, with the same hours,
 * their window: computed once per report, not per campaign (luxon's zone arithmetic per
 * campaign was ~45 ms of a CPU profile of `status` over 100 campaigns).
 */
function settleAll(rows: readonly CampaignRow[], now: number): SettledCampaign[] {
  const days = new Map<string, { start: number; end: number }>();
  const windows = new Map<string, WindowStatus>();
  return rows.map((row) => {
    const config = parseCampaignConfig(row.config_json);
    const { zone, zoneProblem } = campaignZone(row, config);
    const dayZone = zone ?? 'UTC';
    let day = days.get(dayZone);
    if (!day) days.set(dayZone, (day = budgetDay(dayZone, now)));
    // What windowFromCampaign reads, and the zone.
    const windowKey = JSON.stringify([zone, config ? [config.allowedDays, config.allowedHoursStart, config.allowedHoursEnd, config.blackoutDates] : null]);
    let window = windows.get(windowKey);
    if (!window) windows.set(windowKey, (window = windowStatus(config, zone, now)));
    return { row, config, zone, zoneProblem, day, window: { ...window } };
  });
}

function collectCampaign(c: SettledCampaign, now: number, liveCalls: number, counts: CampaignCounts | undefined, activity: CampaignActivity, spend: BudgetSpend | undefined): CampaignStatus {
  const { row, config, zone, zoneProblem, window } = c;
  const leads = leadCounts(counts);
  const attemptsTotal = counts?.attempts ?? 0;
  const today = activity.attemptsSince.get(row.id) ?? 0;
  const completionsLastHour = activity.finishedLeads.get(row.id) ?? 0;
  const left = leads.pending + leads.calling + leads.retry_scheduled;
  const finished = leads.completed + leads.reached_max_retries;
  const perHour = completionsLastHour > 0 ? completionsLastHour / (spanFrom(activity.firstAttempt.get(row.id) ?? null, now) / HOUR_MS) : 0;
  const work = row.state === 'running' && left > 0 && perHour > 0 ? Math.round((left / perHour) * HOUR_MS) : null;
  const budget = config?.budget ? budgetStatus(config.budget, spend ?? noSpend(), c.day, liveCalls, left) : undefined;
  const estimate = work === null ? null : finishAt(config && zone !== null ? windowFromCampaign(config, zone) : undefined, now, work);
  return {
    name: row.name,
    state: row.state,
    window,
    live_calls: liveCalls,
    max_calls_in_parallel: row.max_calls_in_parallel,
    leads,
    attempts: { total: attemptsTotal, today },
    problem: row.problem ?? zoneProblem ?? (config ? null : 'stored campaign settings are unreadable: restart the daemon to store them again'),
    success_rate: finished > 0 ? Math.round((leads.completed / finished) * 10_000) / 10_000 : null,
    estimated_finish_at: estimate === null ? null : formatLocal(estimate, zone ?? 'UTC'),
    completions_last_hour: completionsLastHour,
    ...(budget ? { budget } : {}),
  };
}

/** The budget's figures, judged as the dial loop judges them (the same spending read, the same hold). */
function budgetStatus(b: CampaignBudget, spend: BudgetSpend, day: { end: number }, live: number, left: number): BudgetStatus {
  const unit = unitCost(b, spend);
  const money = (n: number) => Math.round(n * 100) / 100;
  return {
    max_cost: b.maxCost,
    max_cost_per_day: b.maxCostPerDay,
    spent: money(spend.spent),
    spent_today: money(spend.spentToday),
    remaining: b.maxCost === null ? null : money(Math.max(0, b.maxCost - spend.spent)),
    projected: money(Math.max(0, left - live) * unit),
    paused: budgetPaused(budgetHold(b, spend, 0, day.end)),
  };
}

function windowStatus(config: CampaignConfig | undefined, zone: string | null, now: number): WindowStatus {
  if (!config || zone === null) return { open: null, next_open_at: null, closes_at: null, timezone: zone };
  const spec = windowFromCampaign(config, zone);
  if (isOpen(spec, now)) {
    const closes = nextClosing(spec, now);
    return { open: true, next_open_at: null, closes_at: closes === null ? null : formatLocal(closes, zone), timezone: zone };
  }
  const next = nextOpening(spec, now);
  return { open: false, next_open_at: next === null ? null : formatLocal(next, zone), closes_at: null, timezone: zone };
}

/**
 * The instant by which `work` ms of calling are done when calls happen only while the
 * window is open: the pace was measured in calling time, so closed hours do not count.
 * Null when the window never opens again (within the window functions' horizon).
 */
export function finishAt(spec: WindowSpec | undefined, now: number, work: number): number | null {
  if (!spec) return now + work;
  let t = now;
  let rest = work;
  // Each turn consumes one opening; a few hundred covers any estimate worth showing.
  for (let i = 0; i < 1000; i++) {
    const open = isOpen(spec, t) ? t : nextOpening(spec, t);
    if (open === null) return null;
    const close = nextClosing(spec, open);
    if (close === null || close - open >= rest) return open + rest;
    rest -= close - open;
    t = close;
  }
  return null;
}

function predialStatus(counts: PredialCounts | undefined): NonNullable<CampaignStatus['predial']> {
  const last = counts?.lastFailure;
  return { checks: counts?.checks ?? 0, failures: counts?.failures ?? 0, last_failure: last ? { at: isoUtc(last.at), detail: last.detail } : null };
}

/** Lead states in the order of the report's `leads` keys. */
const LEAD_STATE_KEYS = [
  ['pending', 'pending'],
  ['calling', 'calling'],
  ['retry-scheduled', 'retry_scheduled'],
  ['completed', 'completed'],
  ['reached-max-retries', 'reached_max_retries'],
  ['invalid', 'invalid'],
  ['suppressed', 'suppressed'],
  ['cancelled', 'cancelled'],
  ['moved', 'moved'],
] as const satisfies readonly (readonly [LeadState, keyof LeadCounts])[];

/** One campaign's lead counts in the report's shape; states status does not know are not in the total. */
function leadCounts(counts: CampaignCounts | undefined): LeadCounts {
  const out = emptyCounts();
  for (const [state, key] of LEAD_STATE_KEYS) {
    const n = counts?.leads[state] ?? 0;
    out[key] = n;
    out.total += n;
  }
  return out;
}

/** Leads finished in the last hour that have an attempt from the last few hours. */
function lastHour(now: number): FinishedWindow {
  return { finishedSince: now - HOUR_MS, attemptedSince: now - PACE_LOOKBACK_MS };
}

/**
 * From the first attempt of the last hour (null: none) to now, between 5 min and an hour:
 * a campaign that started 10 minutes ago is measured over 10 minutes, not 60, and the first
 * calls do not promise a wild pace.
 */
function spanFrom(first: number | null, now: number): number {
  return Math.min(HOUR_MS, Math.max(5 * 60_000, now - (first ?? now - HOUR_MS)));
}

function emptyCounts(): LeadCounts {
  return { total: 0, pending: 0, calling: 0, retry_scheduled: 0, completed: 0, reached_max_retries: 0, invalid: 0, suppressed: 0, cancelled: 0, moved: 0, confirming: 0 };
}

/** The normalised campaign stored by the daemon, or undefined when it cannot be used. */
function parseCampaignConfig(json: string): CampaignConfig | undefined {
  try {
    const value = JSON.parse(json) as Partial<CampaignConfig> | null;
    if (!value || !Array.isArray(value.allowedDays) || typeof value.allowedHoursStart !== 'number' || typeof value.allowedHoursEnd !== 'number') return undefined;
    return { ...value, blackoutDates: Array.isArray(value.blackoutDates) ? value.blackoutDates : [] } as CampaignConfig;
  } catch {
    return undefined;
  }
}

function parseProblems(json: string | null): unknown[] {
  if (!json) return [];
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value : [value];
  } catch {
    return [json];
  }
}

/** Whether a stored problem (a formatted line "FILE:LINE:COL field: …", or a ConfigProblem) is about `file`. */
function problemIsAbout(p: unknown, file: string): boolean {
  if (typeof p === 'string') return p.startsWith(`${file}:`) || p.startsWith(`${file} `);
  return !!p && typeof p === 'object' && (p as { file?: unknown }).file === file;
}

/** A row whose heartbeat is fresh, not stopped, and (on this host) whose pid lives. */
function daemonRunning(row: DaemonRow, opts: CollectOptions): boolean {
  const fresh = opts.now - row.heartbeat_at <= HEARTBEAT_STALE_MS;
  const sameHost = opts.hostname === undefined || opts.hostname === row.hostname;
  return fresh && row.stopped_at === null && (!sameHost || opts.isPidAlive(row.pid));
}

function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}

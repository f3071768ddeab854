import type { Kysely } from 'kysely';
import { collectStatus } from '../status/collect.js';
import type { StatusReport } from '../status/types.js';
import type { Database } from '../store/types.js';
import { campaignNames } from '../store/campaigns.js';
import { HOURS, hoursSince, type HourlyCounter } from './hourly.js';

/** What one view of the dashboard shows: status's report plus what only the dashboard draws. */
export interface DashboardData {
  generated_at: string;
  /** Exactly `campaignd status --json`'s document. */
  status: StatusReport;
  /** Attempts per hour over the last day, by campaign name (oldest hour first). */
  attempts_per_hour: Record<string, number[]>;
  /** Start of the first bar (UTC ISO). */
  attempts_since: string;
  /** The rate budget the daemon runs under (api.rate_limit). */
  rate_limit: { requests_per_minute: number; burst: number; burst_window_seconds: number };
}

export interface DataDeps {
  db: Kysely<Database>;
  version: string;
  hostname: string;
  isPidAlive: (pid: number) => boolean;
  rateLimit: { requestsPerMinute: number; burst: number; burstWindowSeconds: number };
  /** Keeps the counts of hours that have ended (one per dashboard). */
  hourly: HourlyCounter;
}

export async function collectDashboard(deps: DataDeps, now: number): Promise<DashboardData> {
  const status = await collectStatus(deps.db, { now, version: deps.version, isPidAlive: deps.isPidAlive, hostname: deps.hostname });
  const ids = await campaignNames(deps.db);
  const hourly = await deps.hourly.read(deps.db, ids.map((r) => r.id), now);
  const attempts_per_hour: Record<string, number[]> = {};
  for (const r of ids) attempts_per_hour[r.name] = hourly.get(r.id) ?? new Array<number>(HOURS).fill(0);
  const since = hoursSince(now);
  return {
    generated_at: new Date(now).toISOString(),
    status,
    attempts_per_hour,
    attempts_since: new Date(since).toISOString(),
    rate_limit: { requests_per_minute: deps.rateLimit.requestsPerMinute, burst: deps.rateLimit.burst, burst_window_seconds: deps.rateLimit.burstWindowSeconds },
  };
}

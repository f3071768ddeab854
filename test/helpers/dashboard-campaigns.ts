// The dashboard's campaign cards rendered from status figures written by hand
// (dashboard-*.test.ts): one running campaign of ten leads, plus whatever a test adds.
import type { DashboardData } from '../../src/dashboard/data.js';
import { renderCampaigns } from '../../src/dashboard/render.js';
import type { CampaignStatus } from '../../src/status/types.js';

export const DASHBOARD_NOW = Date.parse('2026-11-26T14:00:00Z');

/** A running campaign, 4 of 10 leads completed, with `extra` (budget, callbacks…) over it. */
export function campaignStatus(name: string, extra: Partial<CampaignStatus> = {}): CampaignStatus {
  return {
    name,
    state: 'running',
    window: { open: true, next_open_at: null, closes_at: null, timezone: 'UTC' },
    live_calls: 0,
    max_calls_in_parallel: 5,
    leads: { total: 10, pending: 6, calling: 0, retry_scheduled: 0, completed: 4, reached_max_retries: 0, invalid: 0, suppressed: 0, cancelled: 0, moved: 0, confirming: 0 },
    attempts: { total: 4, today: 4 },
    problem: null,
    success_rate: 1,
    estimated_finish_at: null,
    completions_last_hour: 0,
    ...extra,
  };
}

/** The campaigns page's HTML for these campaigns under a running daemon. */
export function campaignsPage(campaigns: CampaignStatus[]): string {
  const data: DashboardData = {
    generated_at: new Date(DASHBOARD_NOW).toISOString(),
    attempts_since: new Date(DASHBOARD_NOW - 23 * 3_600_000).toISOString(),
    attempts_per_hour: {},
    rate_limit: { requests_per_minute: 100, burst: 20, burst_window_seconds: 10 },
    status: {
      daemon: { running: true, pid: 1, version: '1', api: 'ok', api_detail: null, hostname: 'h', started_at: null, heartbeat_at: null, stopped_at: null, problems: [], api_requests: { sent: 0, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: 1, instances: [], max_calls_in_parallel: 20, live_calls: 0 },
      campaigns,
    },
  };
  return renderCampaigns(data, 'csrf').text;
}

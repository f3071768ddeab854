// A campaign with callbacks on the dashboard: its card shows the same counts as `status`
// (scheduled, placed, refused, dropped); a campaign without callbacks shows no such cell.
import { describe, expect, it } from 'vitest';
import type { DashboardData } from '../../src/dashboard/data.js';
import { renderCampaigns } from '../../src/dashboard/render.js';
import type { CampaignStatus } from '../../src/status/types.js';

const NOW = Date.parse('2026-11-26T14:00:00Z');

function campaign(name: string, callbacks?: CampaignStatus['callbacks']): CampaignStatus {
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
    ...(callbacks ? { callbacks } : {}),
  };
}

function page(campaigns: CampaignStatus[]): string {
  const data: DashboardData = {
    generated_at: new Date(NOW).toISOString(),
    attempts_since: new Date(NOW - 23 * 3_600_000).toISOString(),
    attempts_per_hour: {},
    rate_limit: { requests_per_minute: 100, burst: 20, burst_window_seconds: 10 },
    status: {
      daemon: { running: true, pid: 1, version: '1', api: 'ok', api_detail: null, hostname: 'h', started_at: null, heartbeat_at: null, stopped_at: null, problems: [], api_requests: { sent: 0, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: 1, instances: [], max_calls_in_parallel: 20, live_calls: 0 },
      campaigns,
    },
  };
  return renderCampaigns(data, 'csrf').text;
}

describe('dashboard: callbacks', () => {
  it('the card of a campaign with callbacks shows scheduled, placed, refused and dropped', () => {
    const text = page([campaign('cb', { scheduled: 3, placed: 1250, refused: 2, dropped: 1 })]);
    expect(text).toContain('<h3>Callbacks</h3>');
    expect(text).toContain('<b class="cb-scheduled">3</b> scheduled · <span class="cb-placed">1,250</span> placed');
    expect(text).toContain('<span class="cb-refused">2</span> refused · <span class="cb-dropped">1</span> dropped');
  });

  it('a campaign without callbacks has no callbacks cell', () => {
    expect(page([campaign('plain')])).not.toContain('Callbacks');
  });
});

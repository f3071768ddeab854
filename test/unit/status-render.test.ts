// The human `campaignd status` table: the cancelled leads' column and the pre-dial check's
// failures (a column, and a line with the last failure).
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/status/render.js';
import type { CampaignStatus, StatusReport } from '../../src/status/types.js';
import { campaignStatus } from '../helpers/dashboard-campaigns.js';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

/** A running campaign of ten leads, three of them cancelled. */
function campaign(name: string, over: Partial<CampaignStatus> = {}): CampaignStatus {
  return campaignStatus(name, {
    leads: { total: 10, pending: 4, calling: 0, retry_scheduled: 0, completed: 3, reached_max_retries: 0, invalid: 0, suppressed: 0, cancelled: 3, moved: 0, confirming: 0 },
    attempts: { total: 3, today: 3 },
    ...over,
  });
}

function report(campaigns: CampaignStatus[]): StatusReport {
  return {
    daemon: {
      running: false, pid: null, version: '0.1.0', api: 'unknown', api_detail: null, hostname: null, started_at: null, heartbeat_at: null, stopped_at: null,
      problems: [], api_requests: { sent: 0, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: null, instances: [], max_calls_in_parallel: null, live_calls: 0,
    },
    campaigns,
  };
}

describe('status, human table', () => {
  it('shows cancelled leads and the pre-dial check failures, with the last one said below the table', () => {
    const text = renderStatus(
      report([
        campaign('checked', { predial: { checks: 120, failures: 3, last_failure: { at: new Date(NOW - 5 * 60_000).toISOString(), detail: 'pre-dial check failed: no answer within 3000 ms' } } }),
        campaign('plain'),
      ]),
      { now: NOW, color: false },
    );
    const lines = text.split('\n');
    const header = lines.find((l) => l.startsWith('CAMPAIGN'))!;
    expect(header).toMatch(/SUPPR\s+CANCEL\s+TOTAL\s+TODAY\s+SUCCESS\s+FINISH\s+PREDIAL$/);
    expect(lines.find((l) => l.startsWith('checked'))).toMatch(/\s0\s+3\s+10\s+3\s+100%\s+-\s+3\/120 failed$/);
    expect(lines.find((l) => l.startsWith('plain'))).toMatch(/\s3\s+10\s+3\s+100%\s+-\s+-$/);
    expect(text).toContain('checked: pre-dial check failed 3 of 120 times; last 5 min ago: pre-dial check failed: no answer within 3000 ms');
  });

  it('leaves the PREDIAL column out when no campaign has a check', () => {
    const text = renderStatus(report([campaign('plain')]), { now: NOW, color: false });
    expect(text.split('\n').find((l) => l.startsWith('CAMPAIGN'))).toMatch(/SUPPR\s+CANCEL\s+TOTAL\s+TODAY\s+SUCCESS\s+FINISH$/);
    expect(text).not.toContain('pre-dial');
  });

  it('says how many accounts each instance dials when there are several accounts (several active instances)', () => {
    const r = report([campaign('plain')]);
    const beat = new Date(NOW - 1000).toISOString();
    r.daemon = { ...r.daemon, running: true, active_pid: 41, instances: [{ pid: 41, hostname: 'a', role: 'active', heartbeat_at: beat }, { pid: 42, hostname: 'b', role: 'standby', heartbeat_at: beat }] };
    const account = (name: string, pid: number, hostname: string) => ({ name, instance: `${hostname}:${pid}:1`, pid, hostname, lease_expires_at: new Date(NOW + 3000).toISOString(), api: 'ok' as const, api_detail: null, requests: { sent: 1, rate_limited: 0 } });
    r.accounts = [account('acme', 41, 'a'), account('globex', 42, 'b'), account('initech', 42, 'b')];
    const line = renderStatus(r, { now: NOW, color: false }).split('\n').find((l) => l.startsWith('Instances:'));
    expect(line).toBe('Instances: active pid 41 on a (heartbeat 1 s ago, dials 1 account) · standby pid 42 on b (heartbeat 1 s ago, dials 2 accounts)');
  });
});

// The accounts in the human status and on the dashboard (README, "Many accounts"): shown
// only when there are several, one line or row each, user text escaped on the page.
import { describe, expect, it } from 'vitest';
import type { DashboardData } from '../../src/dashboard/data.js';
import { renderDaemon } from '../../src/dashboard/render.js';
import { renderAccountLines, type AccountStatus } from '../../src/status/accounts.js';

const EVIL = `<img src=x onerror="alert(1)">`;

const account = (name: string, over: Partial<AccountStatus> = {}): AccountStatus => ({
  name,
  instance: 'host:42:1',
  pid: 42,
  hostname: 'host',
  lease_expires_at: null,
  api: 'ok',
  api_detail: null,
  requests: { sent: 120, rate_limited: 0 },
  ...over,
});

const TWO = [account('acme'), account('globex', { api: 'token-rejected', api_detail: EVIL, requests: { sent: 7, rate_limited: 2 } })];

function data(accounts: AccountStatus[]): DashboardData {
  return {
    generated_at: '2026-11-25T12:00:00.000Z',
    attempts_since: '2026-11-24T13:00:00.000Z',
    attempts_per_hour: {},
    rate_limit: { requests_per_minute: 100, burst: 20, burst_window_seconds: 10 },
    status: {
      daemon: { running: true, pid: 42, version: '1.0.0', api: 'ok', api_detail: null, token_source: null, hostname: 'host', started_at: null, heartbeat_at: null, stopped_at: null, problems: [], api_requests: { sent: 127, rate_limited: 2, budget_wait_seconds: 0 }, active_pid: 42, instances: [], max_calls_in_parallel: null, live_calls: 0 },
      campaigns: [],
      accounts,
    },
  };
}

describe('accounts in status and on the dashboard', () => {
  it('the human status has an ACCOUNTS block only with several accounts', () => {
    expect(renderAccountLines([account('default')])).toEqual([]);
    expect(renderAccountLines(undefined)).toEqual([]);
    expect(renderAccountLines(TWO)).toEqual([
      'ACCOUNTS',
      '  acme    pid 42 on host  api ok  requests 120, 429s 0',
      `  globex  pid 42 on host  api token-rejected (${EVIL})  requests 7, 429s 2`,
    ]);
  });

  it('on PostgreSQL each line says until when its holder leases the account', () => {
    const held = [account('acme', { lease_expires_at: '2026-11-25T12:00:05.000Z' }), account('globex', { pid: 43, instance: 'other:43:1', hostname: 'other', lease_expires_at: '2026-11-25T12:00:04.000Z' })];
    expect(renderAccountLines(held)).toEqual([
      'ACCOUNTS',
      '  acme    pid 42 on host  lease until 2026-11-25T12:00:05.000Z  api ok  requests 120, 429s 0',
      '  globex  pid 43 on other  lease until 2026-11-25T12:00:04.000Z  api ok  requests 120, 429s 0',
    ]);
  });

  it('the dashboard shows a small accounts table with several accounts, escaped', () => {
    expect(renderDaemon(data([account('default')])).text).not.toContain('class="accounts"');
    const page = renderDaemon(data(TWO)).text;
    expect(page).toContain('<table class="accounts">');
    expect(page).toContain('<td>globex</td>');
    expect(page).toContain('<td class="bad">token-rejected');
    expect(page).not.toContain(EVIL);
  });
});

// No user data reaches the page unescaped: campaign names, problems, explain messages and
// daemon problems holding markup come out as text.
import { describe, expect, it } from 'vitest';
import type { DashboardData } from '../../src/dashboard/data.js';
import { escapeHtml, html, raw } from '../../src/dashboard/html.js';
import { renderPage } from '../../src/dashboard/render.js';
import { renderExplanation } from '../../src/dashboard/render-explain.js';

const EVIL = `<img src=x onerror="alert(1)">'"&`;

function data(): DashboardData {
  return {
    generated_at: '2026-11-25T12:00:00.000Z',
    attempts_since: '2026-11-24T13:00:00.000Z',
    attempts_per_hour: { [EVIL]: new Array<number>(24).fill(1) },
    rate_limit: { requests_per_minute: 100, burst: 20, burst_window_seconds: 10 },
    status: {
      daemon: { running: true, pid: 42, version: '1.0.0', api: 'ok', api_detail: EVIL, hostname: EVIL, started_at: null, heartbeat_at: null, stopped_at: null, problems: [EVIL], api_requests: { sent: 5, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: 42, instances: [{ pid: 42, hostname: EVIL, role: 'active', heartbeat_at: '2026-11-24T13:00:00.000Z' }], max_calls_in_parallel: 20, live_calls: 20 },
      campaigns: [
        {
          name: EVIL,
          state: 'running',
          window: { open: true, next_open_at: null, closes_at: '2026-11-25T18:00:00+01:00', timezone: 'Europe/Berlin' },
          live_calls: 2,
          max_calls_in_parallel: 5,
          leads: { total: 10, pending: 4, calling: 2, retry_scheduled: 1, completed: 2, reached_max_retries: 1, invalid: 0, suppressed: 0, cancelled: 0, moved: 0, confirming: 0 },
          attempts: { total: 5, today: 5 },
          problem: EVIL,
          success_rate: 0.6667,
          estimated_finish_at: null,
          completions_last_hour: 1,
        },
      ],
      hooks: [
        { url: `https://crm.example/${EVIL}`, backlog: 12, oldest_undelivered_seconds: 30, failing: 2, disabled: null },
        { url: 'https://old.example/hook', backlog: 3, oldest_undelivered_seconds: 900, failing: 0, disabled: { at: '2026-11-25T11:00:00.000Z', reason: 'gone' } },
      ],
    },
  };
}

describe('dashboard HTML', () => {
  it('escapes interpolations and keeps built HTML', () => {
    expect(escapeHtml(EVIL)).toBe('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&quot;&amp;');
    expect(html`<b>${EVIL}</b>${raw('<i>ok</i>')}${[html`<u>${'<'}</u>`, '>']}`.text).toBe(`<b>${escapeHtml(EVIL)}</b><i>ok</i><u>&lt;</u>&gt;`);
  });

  it('shows hostile campaign names, problems and daemon facts as text', () => {
    const page = renderPage(data(), { csrf: 'tok"en', tokenRequired: true, search: { query: EVIL, result: html`` } });
    expect(page).not.toContain('<img');
    expect(page).not.toContain('onerror="');
    expect(page).toContain(escapeHtml(EVIL));
    expect(page).toContain('value="tok&quot;en"');
    // The campaign's window as said in its zone, marked for the viewer's local time.
    expect(page).toContain('<b>open</b>, closes <time datetime="2026-11-25T18:00:00+01:00" data-local data-said="Wed 18:00">Wed 18:00 Berlin</time>');
    expect(page).not.toContain('18:00:00+01:00<');
    // Only the daemon's own script and stylesheet.
    expect(page.match(/<script[^>]*>/g)).toEqual(['<script src="/dashboard/app.js" defer>']);
    // The results backlog of the hooks.
    expect(page).toMatch(/Results backlog<\/dt><dd class="bad"><b>15<\/b> undelivered/);
    expect(page).toContain('disabled since 2026-11-25T11:00:00.000Z');
    expect(page.replace(/https:\/\/(crm|old)\.example\//g, '')).not.toMatch(/https?:\/\//);
  });

  it('shows the live calls over all campaigns beside the daemon-wide limit, marked when it is reached', () => {
    const page = renderPage(data(), { csrf: 't', tokenRequired: false });
    expect(page).toContain('<dt>Live calls</dt><dd class="bad" title="the daemon-wide max_calls_in_parallel is reached"><b class="daemon-live">20</b> / 20 <small>(daemon-wide limit)</small> over 1 campaign</dd>');
    const unset = data();
    unset.status.daemon = { ...unset.status.daemon, max_calls_in_parallel: null, live_calls: 3 };
    expect(renderPage(unset, { csrf: 't', tokenRequired: false })).toContain('<dt>Live calls</dt><dd><b class="daemon-live">3</b> over 1 campaign</dd>');
  });

  it('shows explain answers as text', () => {
    const out = renderExplanation({
      phone_number: '+15550000000',
      daemon_running: true,
      leads: [
        {
          campaign: EVIL,
          lead_id: 1,
          state: 'pending',
          reason: 'window-closed',
          message: EVIL,
          next_call_at: null,
          zones: [],
          zone_source: 'campaign',
          regions: [],
          contact_position: 0,
          contacts: ['+15550000000', EVIL],
          attempts: [{ id: 1, phone_number: '+15550000000', contact_position: 0, state: 'ended', outcome: 'voicemail', call_status: EVIL, call_id: null, detail: EVIL, created_at: '2026-11-25T13:00:00+01:00', ended_at: null }],
          callbacks: [],
        },
      ],
    }, { zoneOf: () => 'Europe/Berlin', now: Date.parse('2026-11-25T12:30:00Z') }).text;
    expect(out).not.toContain('<img');
    // Campaign (attribute and text), message, contact, call status, detail.
    expect(out.split(escapeHtml(EVIL)).length - 1).toBe(6);
    // The attempt's time as said in the campaign's zone.
    expect(out).toContain('<td><time datetime="2026-11-25T13:00:00+01:00" data-local data-said="Wed 13:00">Wed 13:00 Berlin</time></td>');
  });
});

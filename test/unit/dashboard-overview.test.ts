// The overview of many campaigns: one row each, filtered and sorted by the page's query,
// a row opening its card; the cards alone for a few campaigns; times as a person says them.
import { describe, expect, it } from 'vitest';
import type { DashboardData } from '../../src/dashboard/data.js';
import { escapeHtml } from '../../src/dashboard/html.js';
import { renderCampaigns, renderPage } from '../../src/dashboard/render.js';
import { CARDS_UP_TO } from '../../src/dashboard/render-overview.js';
import { DEFAULT_VIEW, parseView, selectCampaigns, viewQuery, type View } from '../../src/dashboard/view.js';
import { spokenTime, zonePlace } from '../../src/dashboard/when.js';
import type { CampaignStatus } from '../../src/status/types.js';

const NOW = Date.parse('2026-11-26T14:00:00Z'); // a Thursday

function campaign(i: number, over: Partial<CampaignStatus> = {}): CampaignStatus {
  return {
    name: `c${String(i).padStart(3, '0')}`,
    state: 'running',
    window: { open: true, next_open_at: null, closes_at: '2026-11-26T23:59:00-05:00', timezone: 'America/New_York' },
    live_calls: i % 5,
    max_calls_in_parallel: 5,
    leads: { total: 100, pending: 100 - i, calling: 0, retry_scheduled: 0, completed: i, reached_max_retries: 0, invalid: 0, suppressed: 0, cancelled: 0, moved: 0, confirming: 0 },
    attempts: { total: i, today: i },
    problem: null,
    success_rate: i > 0 ? 1 : null,
    estimated_finish_at: null,
    completions_last_hour: 0,
    ...over,
  };
}

function data(campaigns: CampaignStatus[]): DashboardData {
  return {
    generated_at: new Date(NOW).toISOString(),
    attempts_since: new Date(NOW - 23 * 3_600_000).toISOString(),
    attempts_per_hour: Object.fromEntries(campaigns.map((c) => [c.name, new Array<number>(24).fill(0)])),
    rate_limit: { requests_per_minute: 100, burst: 20, burst_window_seconds: 10 },
    status: {
      daemon: { running: true, pid: 1, version: '1', api: 'ok', api_detail: null, hostname: 'h', started_at: null, heartbeat_at: null, stopped_at: null, problems: [], api_requests: { sent: 0, rate_limited: 0, budget_wait_seconds: 0 }, active_pid: 1, instances: [], max_calls_in_parallel: 20, live_calls: 0 },
      campaigns,
    },
  };
}

/** 100 campaigns: every 10th with a problem, every 4th paused, every 3rd with its window closed. */
function hundred(): CampaignStatus[] {
  return Array.from({ length: 100 }, (_, i) =>
    campaign(i, {
      ...(i % 10 === 7 ? { problem: `assistant ${i} not found` } : {}),
      ...(i % 4 === 1 ? { state: 'paused' as const } : {}),
      ...(i % 3 === 2 ? { window: { open: false, next_open_at: `2026-11-27T09:${String(i % 60).padStart(2, '0')}:00+01:00`, closes_at: null, timezone: 'Europe/Berlin' } } : {}),
      ...(i % 2 === 0 && i % 4 !== 1 ? { estimated_finish_at: new Date(NOW + (100 - i) * 60_000).toISOString().replace('Z', '+00:00') } : {}),
    }),
  );
}

const rowNames = (text: string): string[] => [...text.matchAll(/<tr class="c-row[^"]*" data-campaign="([^"]+)"/g)].map((m) => m[1]!);

describe('times as a person says them', () => {
  it('names the place of the zone and the weekday, never an ISO stamp', () => {
    expect(zonePlace('America/New_York')).toBe('New York');
    expect(zonePlace('America/Argentina/Buenos_Aires')).toBe('Buenos Aires');
    expect(zonePlace('UTC')).toBe('UTC');
    expect(zonePlace('Etc/GMT+5')).toBe('Etc/GMT+5');
    const t = spokenTime('2026-11-26T23:59:00-05:00', 'America/New_York', NOW).text;
    expect(t).toBe('<time datetime="2026-11-26T23:59:00-05:00" data-local data-said="Thu 23:59">Thu 23:59 New York</time>');
    // Said in the zone it names, whatever the stamp's offset.
    expect(spokenTime('2026-11-26T14:00:00+00:00', 'Asia/Tokyo', NOW).text).toContain('>Thu 23:00 Tokyo<');
    // Beyond six days the date is said too.
    expect(spokenTime('2026-12-07T09:00:00+01:00', 'Europe/Berlin', NOW).text).toContain('>Mon 7 Dec 09:00 Berlin<');
  });
});

describe('the overview', () => {
  it(`shows cards up to ${CARDS_UP_TO} campaigns and one row each beyond`, () => {
    const few = renderCampaigns(data(hundred().slice(0, CARDS_UP_TO)), 'csrf').text;
    expect(few.match(/<article class="campaign"/g)).toHaveLength(CARDS_UP_TO);
    expect(few).not.toContain('<table');
    const many = renderCampaigns(data(hundred()), 'csrf').text;
    expect(rowNames(many)).toHaveLength(100);
    expect(many).not.toContain('<article');
    expect(many).toContain('<b>open</b>, closes <time datetime="2026-11-26T23:59:00-05:00" data-local data-said="Thu 23:59">Thu 23:59 New York</time>');
    expect(many).not.toMatch(/>\d{4}-\d\d-\d\dT/);
  });

  it('filters running, problems and closed windows, with their counts', () => {
    const all = hundred();
    const page = (view: Partial<View>): string => renderCampaigns(data(all), 'csrf', { ...DEFAULT_VIEW, ...view }).text;
    expect(rowNames(page({ show: 'problems' }))).toEqual(all.filter((c) => c.problem).map((c) => c.name));
    expect(rowNames(page({ show: 'running' }))).toEqual(all.filter((c) => c.state === 'running').map((c) => c.name));
    expect(rowNames(page({ show: 'closed' }))).toEqual(all.filter((c) => c.window.open === false).map((c) => c.name));
    const text = page({ show: 'problems' });
    expect(text).toContain('<a href="/?show=problems" class="filter f-problems alert" aria-current="page">Problems <b>10</b></a>');
    expect(text).toContain('<a href="/" class="filter f-all">All <b>100</b></a>');
  });

  it('sorts by any column, nulls last either way, ties by name', () => {
    const all = hundred();
    const order = (sort: View['sort'], desc = false): string[] => selectCampaigns(all, { ...DEFAULT_VIEW, sort, desc }).map((c) => c.name);
    const withFinish = all.filter((c) => c.estimated_finish_at).sort((a, b) => Date.parse(a.estimated_finish_at!) - Date.parse(b.estimated_finish_at!)).map((c) => c.name);
    expect(order('finish').slice(0, withFinish.length)).toEqual(withFinish);
    expect(order('finish', true).slice(0, withFinish.length)).toEqual([...withFinish].reverse());
    expect(order('problem').slice(0, 10).every((n) => all.find((c) => c.name === n)!.problem)).toBe(true);
    expect(order('name', true)[0]).toBe('c099');
    // Open windows before closed ones.
    const byWindow = order('window');
    expect(byWindow.findIndex((n) => all.find((c) => c.name === n)!.window.open === false)).toBe(all.filter((c) => c.window.open).length);
    // The current column's heading sorts the other way; another column sorts ascending.
    const text = renderCampaigns(data(all), 'csrf', { ...DEFAULT_VIEW, sort: 'finish' }).text;
    expect(text).toContain('<th aria-sort="ascending"><a href="/?sort=finish&amp;dir=desc">Finish ▲</a></th>');
    expect(text).toContain('<th><a href="/?sort=live">Live</a></th>');
  });

  it('opens a row as its card beneath it, with actions that return to the view', () => {
    const view: View = { ...DEFAULT_VIEW, show: 'running', sort: 'live', open: 'c004' };
    const text = renderCampaigns(data(hundred()), 'tok', view).text;
    const row = text.indexOf('data-campaign="c004"');
    const card = text.indexOf('<article class="campaign" data-campaign="c004"');
    expect(row).toBeGreaterThan(0);
    expect(card).toBeGreaterThan(row);
    expect(text.match(/<article/g)).toHaveLength(1);
    // The opened campaign stays when the filter would leave it out (paused from "Running").
    expect(rowNames(renderCampaigns(data(hundred()), 'tok', { ...view, open: 'c001' }).text)).toContain('c001');
    expect(rowNames(text)).not.toContain('c001');
    expect(text).toContain('<input type="hidden" name="back" value="?show=running&amp;sort=live&amp;open=c004">');
    // The opened row's link closes it; another row's opens that one (and scrolls to it).
    expect(text).toContain('data-href="/?show=running&amp;sort=live" id="open"');
    expect(text).toContain('data-href="/?show=running&amp;sort=live&amp;open=c000#open"');
  });

  it('reads a view from the query and writes it back, defaults left out', () => {
    expect(parseView(new URLSearchParams('show=nope&sort=evil&dir=up'))).toEqual(DEFAULT_VIEW);
    const v = parseView(new URLSearchParams('show=closed&sort=success&dir=desc&open=a%26b'));
    expect(v).toEqual({ show: 'closed', sort: 'success', desc: true, open: 'a&b' });
    expect(viewQuery(v)).toBe('?show=closed&sort=success&dir=desc&open=a%26b');
    expect(viewQuery(DEFAULT_VIEW)).toBe('');
  });

  it('keeps hostile names as text and the view in the refresh address', () => {
    const evil = '<img src=x onerror=alert(1)>';
    const all = hundred();
    all[3] = campaign(3, { name: evil, problem: evil });
    const page = renderPage(data(all), { csrf: 'c', tokenRequired: true, view: { ...DEFAULT_VIEW, open: evil } });
    expect(page).not.toContain('<img');
    expect(page).toContain(escapeHtml(evil));
    expect(viewQuery({ ...DEFAULT_VIEW, open: evil })).toMatch(/^\?open=%3Cimg\+src%3Dx/);
    expect(page).toContain(`data-refresh="/dashboard/status.json${escapeHtml(viewQuery({ ...DEFAULT_VIEW, open: evil }))}"`);
  });
});

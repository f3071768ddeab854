import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { collectStatus, finishAt, UnknownCampaignError } from '../../src/status/collect.js';
import { windowFromCampaign } from '../../src/time/window.js';
import { statusProblems } from '../../src/status/problems.js';
import { renderStatus } from '../../src/status/render.js';
import { heartbeat } from '../../src/store/daemons.js';
import { campaignConfig, createStore, insertAttempt, insertCampaign, insertLeads, makeTempConfig, upsertDaemon } from './status-fixture.js';

// Sunday 2026-11-22 09:00 in Berlin: the Mon–Fri window is closed until Monday 09:00.
const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);
const MIN = 60_000;
const DAY = 86_400_000;

let tmp: ReturnType<typeof makeTempConfig>;
let store: DatabaseHandle;

beforeEach(async () => {
  tmp = makeTempConfig();
  store = await createStore(tmp.dbPath);
  const db = store.db;
  const spring = await insertCampaign(db, campaignConfig('spring-renewals'));
  await insertLeads(db, spring, 'pending', 7);
  const [calling] = await insertLeads(db, spring, 'calling', 1);
  const retry = await insertLeads(db, spring, 'retry-scheduled', 2);
  const recent = await insertLeads(db, spring, 'completed', 2, NOW - 20 * MIN);
  const [old] = await insertLeads(db, spring, 'completed', 1, NOW - 2 * DAY);
  const [maxed] = await insertLeads(db, spring, 'reached-max-retries', 1, NOW - 3 * DAY);
  await insertLeads(db, spring, 'invalid', 1);
  await insertLeads(db, spring, 'suppressed', 1);
  await insertLeads(db, spring, 'cancelled', 1);
  for (const id of recent) await insertAttempt(db, { campaignId: spring, leadId: id, state: 'ended', createdAt: NOW - 30 * MIN });
  await insertAttempt(db, { campaignId: spring, leadId: old!, state: 'ended', createdAt: NOW - 2 * DAY });
  await insertAttempt(db, { campaignId: spring, leadId: calling!, state: 'placed', createdAt: NOW - 5 * MIN });
  // 23:30 Berlin on Saturday: yesterday in the campaign's zone, though the same UTC day
  for (const id of retry) await insertAttempt(db, { campaignId: spring, leadId: id, state: 'ended', createdAt: Date.UTC(2026, 10, 21, 22, 30) });
  for (let i = 0; i < 3; i++) await insertAttempt(db, { campaignId: spring, leadId: maxed!, state: 'ended', createdAt: NOW - 3 * DAY + i * MIN });

  await insertCampaign(db, campaignConfig('night-shift', { timezone: 'America/New_York', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0 }), { state: 'paused' });
  await insertCampaign(db, campaignConfig('broken', { timezone: undefined }), { timezone: null, problem: 'assistant 99 does not exist on the service' });
});

afterEach(async () => {
  await store.close();
  tmp.cleanup();
});

const opts = { now: NOW, version: '9.9.9', isPidAlive: () => true, hostname: 'testhost' };

describe('collectStatus', () => {
  it('reports the stable status keys (docs/design.md §7) with counts, window, live calls, today, pace', async () => {
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 2000 });
    const report = await collectStatus(store.db, opts);
    expect(report.campaigns.map((c) => c.name)).toEqual(['broken', 'night-shift', 'spring-renewals']);
    const spring = report.campaigns[2];
    expect(spring).toEqual({
      name: 'spring-renewals',
      state: 'running',
      window: { open: false, next_open_at: '2026-11-23T09:00:00+01:00', closes_at: null, timezone: 'Europe/Berlin' },
      live_calls: 1,
      max_calls_in_parallel: 5,
      leads: { total: 17, pending: 7, calling: 1, retry_scheduled: 2, completed: 3, reached_max_retries: 1, invalid: 1, suppressed: 1, cancelled: 1, moved: 0, confirming: 0 },
      attempts: { total: 9, today: 3 },
      problem: null,
      success_rate: 0.75,
      // 2 leads finished in the 30 min since the first attempt of the hour: 4 per hour,
      // so the 10 active leads take 2.5 h of open window, from Monday 09:00
      estimated_finish_at: '2026-11-23T11:30:00+01:00',
      completions_last_hour: 2,
    });
    expect(report.daemon).toMatchObject({ running: true, pid: 4321, version: '0.1.0', api: 'ok', hostname: 'testhost', heartbeat_at: '2026-11-22T07:59:58.000Z', problems: [] });
    // The table's FINISH names the zone of the estimate, as WINDOW does (issue 26).
    const row = renderStatus(report, { now: NOW, color: false })
      .split('\n')
      .find((l) => l.startsWith('spring-renewals'));
    expect(row).toMatch(/ ~Mon 11:30 Europe\/Berlin \(in 1 d 2 h\)$/);
  });

  it('shows an open whole-day window, a paused campaign without an estimate, and a campaign whose zone is unknown', async () => {
    const report = await collectStatus(store.db, opts);
    const night = report.campaigns.find((c) => c.name === 'night-shift');
    expect(night?.window).toMatchObject({ open: true, next_open_at: null, timezone: 'America/New_York' });
    expect(night?.state).toBe('paused');
    expect(night?.estimated_finish_at).toBeNull();
    expect(night?.success_rate).toBeNull();
    expect(night?.leads.total).toBe(0);
    const broken = report.campaigns.find((c) => c.name === 'broken');
    expect(broken?.window).toEqual({ open: null, next_open_at: null, closes_at: null, timezone: null });
    expect(broken?.problem).toBe('assistant 99 does not exist on the service');
    expect(statusProblems(report)).toEqual(['broken: assistant 99 does not exist on the service']);
  });

  it('reports an open window with its closing time', async () => {
    const monday10 = Date.UTC(2026, 10, 23, 9, 0, 0);
    const report = await collectStatus(store.db, { ...opts, now: monday10, campaign: 'spring-renewals' });
    expect(report.campaigns).toHaveLength(1);
    expect(report.campaigns[0]?.window).toEqual({ open: true, next_open_at: null, closes_at: '2026-11-23T18:00:00+01:00', timezone: 'Europe/Berlin' });
    // a new local day: nothing today yet
    expect(report.campaigns[0]?.attempts.today).toBe(0);
  });

  it('says no daemon has run when there is no daemon row', async () => {
    const report = await collectStatus(store.db, opts);
    expect(report.daemon).toMatchObject({ running: false, pid: null, version: '9.9.9', api: 'unknown', heartbeat_at: null });
    expect(report.daemon.api_requests).toEqual({ sent: 0, rate_limited: 0, budget_wait_seconds: 0 });
  });

  it("shows the daemon's requests, 429s and budget wait from its last heartbeat, in JSON and on one human line", async () => {
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 3000 });
    await heartbeat(store.db, 'a', { now: NOW - 1000, apiStatus: 'ok', apiDetail: null, api: { sent: 1234, rateLimited: 7, budgetWaitMs: 35_240.4 } });
    const report = await collectStatus(store.db, opts);
    expect(report.daemon.api_requests).toEqual({ sent: 1234, rate_limited: 7, budget_wait_seconds: 35.2 });
    const text = renderStatus(report, { now: NOW, color: false });
    expect(text.split('\n')[1]).toBe('API requests: 1234 sent · 7 answered 429 · 35.2 s waited for the rate budget (since the daemon started)');
  });

  it('takes a stale heartbeat, a stopped daemon or a dead pid on this host for not running', async () => {
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 10_001 });
    expect((await collectStatus(store.db, opts)).daemon.running).toBe(false);

    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 1000, stoppedAt: NOW - 500 });
    expect((await collectStatus(store.db, opts)).daemon.running).toBe(false);

    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'testhost', heartbeatAt: NOW - 1000, api: 'token-rejected' });
    const dead = await collectStatus(store.db, { ...opts, isPidAlive: (pid) => pid !== 4321 });
    expect(dead.daemon.running).toBe(false);
    // the last known API state is history once the daemon is gone
    expect(dead.daemon.api).toBe('unknown');
    expect(dead.daemon.api_detail).toMatch(/last known API state: token-rejected/);

    // a pid on another host cannot be checked from here: the heartbeat decides
    await upsertDaemon(store.db, { instance: 'a', pid: 4321, hostname: 'otherhost', heartbeatAt: NOW - 1000 });
    expect((await collectStatus(store.db, { ...opts, isPidAlive: () => false })).daemon.running).toBe(true);
  });

  it('flags a rejected token and broken campaign files of a running daemon as problems', async () => {
    await upsertDaemon(store.db, {
      instance: 'a',
      pid: 4321,
      hostname: 'testhost',
      heartbeatAt: NOW - 1000,
      api: 'token-rejected',
      apiDetail: 'HTTP 401',
      problems: [
        { file: '/etc/campaignd/campaigns/x.yaml', line: 3, field: 'allowed_days[0]', message: '"funday" is not a day name', severity: 'error' },
        { file: '/etc/campaignd/campaigns/y.yaml', message: 'unused column', severity: 'warning' },
      ],
    });
    const report = await collectStatus(store.db, { ...opts, campaign: 'spring-renewals' });
    expect(report.daemon.api).toBe('token-rejected');
    const problems = statusProblems(report);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^no working API token: HTTP 401; /);
    expect(problems[1]).toBe('/etc/campaignd/campaigns/x.yaml:3 allowed_days[0]: "funday" is not a day name');
  });

  it("leaves out another campaign's file problems when one campaign is asked for", async () => {
    const brokenFile = '/etc/campaignd/campaigns/broken.yaml';
    await upsertDaemon(store.db, {
      instance: 'a',
      pid: 4321,
      hostname: 'testhost',
      heartbeatAt: NOW - 1000,
      // the daemon stores formatted lines (src/config/format.ts); objects are read too
      problems: [`${brokenFile}:2:15 assistant_id: must be an integer`, { file: brokenFile, line: 3, message: 'unknown key', severity: 'error' }],
    });
    const one = await collectStatus(store.db, { ...opts, campaign: 'spring-renewals' });
    expect(one.daemon.problems).toEqual([]);
    expect(statusProblems(one)).toEqual([]);
    const all = await collectStatus(store.db, opts);
    expect(all.daemon.problems).toHaveLength(2);
    expect(statusProblems(all)).toContain(`${brokenFile}:2:15 assistant_id: must be an integer`);
  });

  it('throws UnknownCampaignError naming the known campaigns', async () => {
    const err = await collectStatus(store.db, { ...opts, campaign: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownCampaignError);
    expect((err as Error).message).toBe('no campaign named "nope" in the database (known: broken, night-shift, spring-renewals)');
  });
});

describe('finishAt', () => {
  const spec = windowFromCampaign(campaignConfig('x'), 'Europe/Berlin');
  const HOUR = 3_600_000;

  it('counts only open-window time: 20 h of calling from Sunday ends Wednesday 11:00', () => {
    // Mon 9 h + Tue 9 h + Wed 2 h
    expect(finishAt(spec, NOW, 20 * HOUR)).toBe(Date.UTC(2026, 10, 25, 10, 0, 0));
  });

  it('finishes inside the current opening when the work fits', () => {
    const monday10 = Date.UTC(2026, 10, 23, 9, 0, 0);
    expect(finishAt(spec, monday10, 2 * HOUR)).toBe(monday10 + 2 * HOUR);
  });

  it('is plain elapsed time without a window, and null when the window never opens', () => {
    expect(finishAt(undefined, NOW, HOUR)).toBe(NOW + HOUR);
    expect(finishAt({ ...spec, days: [] }, NOW, HOUR)).toBeNull();
  });
});

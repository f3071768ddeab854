// The hook sender on a ManualClock over a real SQLite store: a receiver that never
// answers in time or refuses connections is retried with backoff and given up after
// 72 h (logged); status and /metrics show the backlog, its oldest age and failures.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { startHookSender, type HookSender } from '../../src/hooks/sender.js';
import { startDaemonHooks } from '../../src/hooks/wire.js';
import { createMetrics } from '../../src/http/metrics.js';
import type { DaemonConfig } from '../../src/config/types.js';
import { collectHookStatus, renderHookLines } from '../../src/hooks/status.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { forgetNumber } from '../../src/store/results-forget.js';
import { ManualClock } from '../../src/time/clock.js';
import { waitUntil } from '../helpers/wait.js';
import { capturingLogger } from './client-fixture.js';

const T0 = Date.UTC(2026, 10, 25, 9, 0, 0);
const HOUR = 3600_000;
let store: DatabaseHandle;
let clock: ManualClock;
let sender: HookSender | null = null;
let server: http.Server | null = null;

beforeEach(async () => {
  clock = new ManualClock(T0);
  store = openDatabase(':memory:');
  await migrateToLatest(store.db, { clock });
  const { db } = store;
  await syncHookSubscriptions(db, [{ url: 'http://127.0.0.1:9/hook', events: ['lead.final'] }]);
  await db.insertInto('campaigns').values({ id: 1, name: 'c', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: T0, updated_at: T0, completed_at: null }).execute();
  // An invalid row of an import is final from the start: one lead.final event.
  await db.insertInto('leads').values({ campaign_id: 1, dedupe_key: '+4915112345678', phone_number: '+4915112345678', variables_json: '{"name":"Ada"}', state: 'invalid', state_reason: 'bad', next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: T0, updated_at: T0 }).execute();
});
afterEach(async () => {
  await sender?.stop();
  sender = null;
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
  await store.close();
});

describe('hook sender', () => {
  it('an event nobody acknowledges is retried with backoff and given up after 72 h, with a log line', async () => {
    const logs = capturingLogger();
    let posts = 0;
    sender = startHookSender({
      db: store.db, clock, logger: logs.logger, hooks: [{ url: 'http://127.0.0.1:9/hook', secretEnv: 'S' }], secret: () => 'x', random: () => 1, idleMs: 60_000,
      post: async () => {
        posts++;
        throw new Error('connect ECONNREFUSED 127.0.0.1:9');
      },
    });
    await waitUntil(() => posts === 1, { message: 'the first try' });
    const row = await store.db.selectFrom('hook_outbox').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ tries: 1, next_try_at: T0 + 1000, last_error: 'Error: connect ECONNREFUSED 127.0.0.1:9' });
    expect(JSON.parse(row.body!)).toMatchObject({ type: 'lead.final', data: { lead: { state: 'invalid', variables: { name: 'Ada' } }, attempt: null } });
    // Status while failing.
    await clock.advance(30 * 60_000);
    const status = await collectHookStatus(store.db, clock.now());
    expect(status).toEqual([{ url: 'http://127.0.0.1:9/hook', backlog: 1, oldest_undelivered_seconds: 1800, failing: 1, disabled: null }]);
    expect(renderHookLines(status)[0]).toBe('hook http://127.0.0.1:9/hook: 1 undelivered, oldest 30 min, 1 failing (retried with backoff)');
    const triesAt30min = posts;
    expect(triesAt30min).toBeGreaterThan(5);
    expect(triesAt30min).toBeLessThan(15);
    // Hourly once the backoff reached its cap; given up at 72 h.
    for (let h = 0; h < 72; h++) await clock.advance(HOUR);
    await waitUntil(async () => (await store.db.selectFrom('hook_outbox').select('id').execute()).length === 0, { message: 'the event given up' });
    expect(posts).toBeLessThan(triesAt30min + 80);
    expect(logs.lines.join('')).toContain('hook event given up after 72 h of failed deliveries');
  });

  it('a receiver slower than the timeout counts as failed and is tried again', async () => {
    let tries = 0;
    let lastTryAt = 0;
    server = http.createServer(() => {
      tries++; // never answers
      lastTryAt = performance.now();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    await syncHookSubscriptions(store.db, [{ url, events: ['lead.final'] }]);
    await store.db.updateTable('leads').set({ state: 'pending' }).execute();
    await store.db.updateTable('leads').set({ state: 'suppressed' }).execute();
    sender = startHookSender({ db: store.db, clock, logger: capturingLogger().logger, hooks: [{ url, secretEnv: 'S' }], secret: () => 'x', timeoutMs: 2000, random: () => 0 });
    await waitUntil(async () => (await store.db.selectFrom('hook_outbox').select(['tries']).where('hook_url', '=', url).executeTakeFirst())?.tries === 1, { message: 'the first try timed out' });
    const row = await store.db.selectFrom('hook_outbox').selectAll().where('hook_url', '=', url).executeTakeFirstOrThrow();
    expect(row.last_error).toMatch(/Timeout/i);
    await clock.advance(1000);
    await waitUntil(() => tries >= 2, { message: 'a second try' });
    // Stopping does not wait for the receiver: the delivery in flight is cut and stays in the outbox.
    await sender!.stop();
    sender = null;
    // Done well before the try in flight could have timed out (2000 ms after it was sent, at
    // most a loopback hop before the receiver saw it): stopping did not wait for it. Measured
    // from the try itself rather than from the stop against a fixed 150 ms, which a loaded
    // machine took to schedule the stop's few steps.
    expect(performance.now() - lastTryAt).toBeLessThan(1000);
    expect(await store.db.selectFrom('hook_outbox').select('id').where('hook_url', '=', url).execute()).toHaveLength(1);
  });

  it('a hook URL that refuses connections: a clear log line, the event kept for the next try', async () => {
    // A port that was just free: nothing listens there.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/refused`;
    await new Promise((r) => probe.close(r));
    await syncHookSubscriptions(store.db, [{ url, events: ['lead.final'] }]);
    await store.db.updateTable('leads').set({ state: 'pending' }).execute();
    await store.db.updateTable('leads').set({ state: 'suppressed' }).execute();
    const logs = capturingLogger();
    sender = startHookSender({ db: store.db, clock, logger: logs.logger, hooks: [{ url, secretEnv: 'S' }], secret: () => 'x' });
    await waitUntil(async () => (await store.db.selectFrom('hook_outbox').select('tries').where('hook_url', '=', url).executeTakeFirst())?.tries === 1, { message: 'one failed try' });
    const row = await store.db.selectFrom('hook_outbox').selectAll().where('hook_url', '=', url).executeTakeFirstOrThrow();
    expect(row.last_error).toMatch(/ECONNREFUSED/);
    expect(logs.lines.join('')).toMatch(/"msg":"hook delivery failed; will retry with backoff"/);
  });

  it('forget erases the body of an undelivered event about the number; the sender drops it unsent', async () => {
    const report = await forgetNumber(store.db, '+4915112345678', { now: T0, keepCalling: true });
    expect(report.hookEvents).toBe(1);
    expect(await store.db.selectFrom('hook_outbox').select('body').execute()).toEqual([{ body: null }]);
    let posts = 0;
    sender = startHookSender({ db: store.db, clock, logger: capturingLogger().logger, hooks: [{ url: 'http://127.0.0.1:9/hook', secretEnv: 'S' }], secret: () => 'x', post: async () => ++posts && 200 });
    await waitUntil(async () => (await store.db.selectFrom('hook_outbox').select('id').execute()).length === 0, { message: 'the erased event dropped' });
    expect(posts).toBe(0);
  });

  it('without its secret a hook is not sent to, and says so once', async () => {
    const logs = capturingLogger();
    sender = startHookSender({ db: store.db, clock, logger: logs.logger, hooks: [{ url: 'http://127.0.0.1:9/hook', secretEnv: 'CRM_SECRET' }], secret: () => undefined, post: async () => 200 });
    await waitUntil(() => logs.lines.some((l) => l.includes('its secret_env is not set')), { message: 'the log line' });
    await clock.advance(5000);
    expect(logs.lines.filter((l) => l.includes('its secret_env is not set'))).toHaveLength(1);
    expect(await store.db.selectFrom('hook_outbox').select('id').execute()).toHaveLength(1);
  });

  it('/metrics shows the backlog, the oldest undelivered age and failed deliveries per hook', async () => {
    server = http.createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/down`;
    const metrics = createMetrics({ defaultMetrics: false });
    const daemon = { hooks: [{ url, secretEnv: 'CRM_SECRET', events: ['lead.final'] }] } as unknown as DaemonConfig;
    const hooks = await startDaemonHooks(daemon, { db: store.db, clock, logger: capturingLogger().logger, metrics, secret: () => 'x' });
    try {
      // The event queued for the hook of beforeEach, no longer configured, is dropped.
      expect(await store.db.selectFrom('hook_outbox').select('hook_url').execute()).toEqual([]);
      // The subscription now names this hook: a lead made final queues one event for it.
      await store.db.updateTable('leads').set({ state: 'pending' }).execute();
      await clock.advance(5 * 60_000);
      await store.db.updateTable('leads').set({ state: 'completed', updated_at: clock.now() }).execute();
      await clock.advance(1000);
      await waitUntil(async () => (await metrics.registry.metrics()).includes(`campaignd_hook_deliveries_total{hook="${url}",result="failed"}`), { message: 'a failed delivery counted' });
      await clock.advance(20_000);
      await waitUntil(async () => (await metrics.registry.metrics()).includes(`campaignd_hook_backlog{hook="${url}"} 1`), { message: () => 'the backlog gauge' });
      expect(await metrics.registry.metrics()).toMatch(new RegExp(`campaignd_hook_oldest_undelivered_seconds\\{hook="${url.replaceAll('/', '\\/')}"\\} (1\\d|2\\d)`));
    } finally {
      await hooks.stop();
    }
  });
});

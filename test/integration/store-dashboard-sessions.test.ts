// Dashboard sessions in the store (migration 0013), through the daemon's real HTTP server
// and the dashboard's routes, on SQLite and (vitest.postgres.config.ts) PostgreSQL: two
// dashboards on one store stand for two instances. A session signed out on one is refused
// by both; an idle session runs out after 12 h by the injected clock, a used one does not;
// expired rows are swept; the store holds neither the token nor the cookie's value.
import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, SESSION_COOKIE } from '../../src/dashboard/guard.js';
import { SESSION_TTL_MS } from '../../src/dashboard/sessions.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';
import { ManualClock } from '../../src/time/clock.js';
import { startDashboardServer } from '../helpers/dashboard-server.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign } from './status-fixture.js';

const TOKEN = 'dash-sessions-7c1f-DO-NOT-STORE';
const HOUR = 3_600_000;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function store(): Promise<DatabaseHandle> {
  const h = await openTestStore();
  closers.push(() => h.close());
  await migrateToLatest(h.db, { clock: { now: () => 0 } });
  return h;
}

/** One instance's HTTP surface with its dashboard (its own guard) on `db`. */
async function instance(db: Kysely<Database>, clock: ManualClock): Promise<string> {
  const server = await startDashboardServer({ db, clock, token: TOKEN, hostname: 'test-host' });
  closers.push(() => server.close());
  return server.url;
}

/** Signs in as the page's form does (a browser sends its Origin); the cookie's name=value. */
async function signIn(base: string): Promise<string> {
  const res = await fetch(`${base}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
  expect(res.status).toBe(303);
  const cookie = res.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43}; Path=/; HttpOnly; SameSite=Strict$`));
  return cookie.split(';')[0]!;
}

const pageStatus = async (base: string, cookie: string): Promise<number> => (await fetch(`${base}/dashboard/status.json`, { headers: { cookie } })).status;

async function csrfOf(base: string, cookie: string): Promise<string> {
  const page = await (await fetch(base, { headers: { cookie } })).text();
  return /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;
}

describe(`dashboard sessions (${testDialect})`, () => {
  it('ends a signed-out session on every instance: the old cookie gets 401', async () => {
    const h = await store();
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
    const a = await instance(h.db, clock);
    const b = await instance(h.db, clock);
    const cookie = await signIn(a);
    expect(await pageStatus(a, cookie)).toBe(200);
    expect(await pageStatus(b, cookie)).toBe(200);
    // The store holds a hash of the session id: neither the token nor the cookie's value.
    const rows = await h.db.selectFrom('dashboard_sessions').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(TOKEN);
    expect(JSON.stringify(rows)).not.toContain(cookie.split('=')[1]);

    const out = await fetch(`${b}/dashboard/logout`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: b, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(await csrfOf(b, cookie))}` });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    // The old cookie, replayed: refused by both instances, for reads and actions.
    expect(await pageStatus(a, cookie)).toBe(401);
    expect(await pageStatus(b, cookie)).toBe(401);
    expect((await fetch(a, { headers: { cookie } })).status).toBe(401);
    const pause = await fetch(`${a}/dashboard/campaigns/pause`, { method: 'POST', headers: { cookie, origin: a, 'content-type': 'application/x-www-form-urlencoded' }, body: 'campaign=x' });
    expect(pause.status).toBe(401);
    expect(await h.db.selectFrom('dashboard_sessions').selectAll().execute()).toEqual([]);
    // Another sign-in is another session.
    expect(await pageStatus(a, await signIn(a))).toBe(200);
  });

  it('ends a session 12 h after its last request, and keeps one in use', async () => {
    const h = await store();
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
    const base = await instance(h.db, clock);
    expect(SESSION_TTL_MS).toBe(12 * HOUR);
    const idle = await signIn(base);
    const used = await signIn(base);
    // `used` makes a request every 11 h: 33 h later it still works.
    for (let i = 0; i < 3; i++) {
      clock.jump(11 * HOUR);
      expect(await pageStatus(base, used)).toBe(200);
    }
    expect(await pageStatus(base, idle)).toBe(401);
    clock.jump(12 * HOUR - 1);
    expect(await pageStatus(base, used)).toBe(200);
    clock.jump(12 * HOUR);
    expect(await pageStatus(base, used)).toBe(401);
    // Signing out of a session that ran out still works: the cookie is cleared, back to sign-in.
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(await (await fetch(base, { headers: { cookie: await signIn(base) } })).text())![1]!;
    const out = await fetch(`${base}/dashboard/logout`, { method: 'POST', redirect: 'manual', headers: { cookie: used, origin: base, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${encodeURIComponent(csrf)}` });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
  });

  it('sweeps expired sessions from the store', async () => {
    const h = await store();
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
    const base = await instance(h.db, clock);
    await signIn(base);
    await signIn(base);
    expect(await h.db.selectFrom('dashboard_sessions').selectAll().execute()).toHaveLength(2);
    clock.jump(13 * HOUR);
    // The next sign-in deletes the two that ran out.
    await signIn(base);
    const left = await h.db.selectFrom('dashboard_sessions').select('expires_at').execute();
    expect(left.map((r) => Number(r.expires_at))).toEqual([clock.now() + 12 * HOUR]);
  });

  it('refuses a pause without Origin or Referer, or from another origin, and takes it from its own page', async () => {
    const h = await store();
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
    await insertCampaign(h.db, campaignConfig('alpha'));
    const base = await instance(h.db, clock);
    const cookie = await signIn(base);
    const csrf = await csrfOf(base, cookie);
    const state = async (): Promise<string> => (await h.db.selectFrom('campaigns').select('state').where('name', '=', 'alpha').executeTakeFirstOrThrow()).state;
    const pause = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${base}/dashboard/campaigns/pause`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: `campaign=alpha&csrf=${encodeURIComponent(csrf)}` });

    const bare = await pause({});
    expect(bare.status).toBe(403);
    expect(await bare.json()).toEqual({ error: 'refused: no Origin or Referer header: actions are taken from the dashboard page' });
    expect((await pause({ referer: 'http://evil.example/page' })).status).toBe(403);
    expect((await pause({ origin: 'http://evil.example', referer: `${base}/` })).status).toBe(403);
    expect(await state()).toBe('running');
    expect((await pause({ referer: `${base}/?phone=%2B15551234567` })).status).toBe(200);
    expect(await state()).toBe('paused');
    // A sign-in without either header is refused too (a login form posted from nowhere).
    const login = await fetch(`${base}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
    expect(login.status).toBe(403);
    expect(login.headers.get('set-cookie')).toBeNull();
  });
});

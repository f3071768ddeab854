// Who may use the API (src/api/auth.ts), against a real store on SQLite and PostgreSQL:
// no key or an unknown, revoked or malformed one is 401, a read key on a write route 403;
// on loopback the API is open only until the first key exists; a key revoked through one
// instance is refused by another at its next request; last_used_at is written at most
// once a minute; no answer repeats what the client sent.
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthorizer } from '../../src/api/auth.js';
import type { AuthResult } from '../../src/api/deps.js';
import { createApiKey, newApiKey } from '../../src/api/keys.js';
import { listApiKeys, revokeApiKey } from '../../src/store/api-keys.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

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

async function keyOf(h: DatabaseHandle, name: string, scope: 'read' | 'write'): Promise<string> {
  const made = await createApiKey(h.db, name, scope, T0);
  if (!made) throw new Error(`key ${name} not created`);
  return made.key;
}

const bearer = (key: string): string => `Bearer ${key}`;
const HOW = 'an operator creates one with "campaignd api-key create NAME --scope read|write"';

/** A refusal, with its detail checked to hold none of `secrets`. */
function expectRefused(r: AuthResult, status: 401 | 403, secrets: string[] = []): string {
  expect(r.ok).toBe(false);
  if (r.ok) throw new Error('unreachable');
  expect(r.status).toBe(status);
  for (const s of secrets) expect(r.detail).not.toContain(s);
  return r.detail;
}

describe(`the API's authorization (${testDialect})`, () => {
  it('on loopback with no key in the store, a request without a key is let through, to read and to write', async () => {
    const h = await store();
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: true });
    expect(await authorize(undefined, 'read')).toEqual({ ok: true, keyName: null });
    expect(await authorize(undefined, 'write')).toEqual({ ok: true, keyName: null });
    expect(await authorize('', 'write')).toEqual({ ok: true, keyName: null });
    // A key sent anyway is checked: there is none it could be.
    const stray = newApiKey().key;
    expectRefused(await authorize(bearer(stray), 'read'), 401, [stray]);
  });

  it('on loopback, once a key exists, a request without a key is 401 saying how to send one', async () => {
    const h = await store();
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: true });
    expect((await authorize(undefined, 'read')).ok).toBe(true);
    await keyOf(h, 'crm', 'write');
    expect(expectRefused(await authorize(undefined, 'read'), 401)).toBe(`this API needs a key: send it as "Authorization: Bearer KEY"; ${HOW}`);
    expectRefused(await authorize(undefined, 'write'), 401);
  });

  it('on loopback, revoking the only key does not open the API again', async () => {
    const h = await store();
    await keyOf(h, 'crm', 'write');
    await revokeApiKey(h.db, 'crm', T0 + 1);
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: true });
    expectRefused(await authorize(undefined, 'read'), 401);
  });

  it('on any other address, every request needs a key, even with none in the store', async () => {
    const h = await store();
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: false });
    expectRefused(await authorize(undefined, 'read'), 401);
    expectRefused(await authorize(undefined, 'write'), 401);
    const key = await keyOf(h, 'crm', 'read');
    expect(await authorize(bearer(key), 'read')).toEqual({ ok: true, keyName: 'crm' });
  });

  it('a read key reads and gets 403 on a write route; a write key does both', async () => {
    const h = await store();
    const reader = await keyOf(h, 'dashboard-feed', 'read');
    const writer = await keyOf(h, 'crm', 'write');
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: false });
    expect(await authorize(bearer(reader), 'read')).toEqual({ ok: true, keyName: 'dashboard-feed' });
    const detail = expectRefused(await authorize(bearer(reader), 'write'), 403, [reader]);
    expect(detail).toBe('the API key "dashboard-feed" may only read; this route changes data and needs a key created with --scope write');
    expect(await authorize(bearer(writer), 'read')).toEqual({ ok: true, keyName: 'crm' });
    expect(await authorize(bearer(writer), 'write')).toEqual({ ok: true, keyName: 'crm' });
    // The scheme is case-insensitive, as HTTP says.
    expect(await authorize(`bearer ${writer}`, 'write')).toEqual({ ok: true, keyName: 'crm' });
  });

  it('an unknown key, an altered one and a malformed header are 401, none repeated in the answer', async () => {
    const h = await store();
    const key = await keyOf(h, 'crm', 'write');
    const authorize = createAuthorizer({ db: h.db, clock: new ManualClock(T0), loopback: true });
    const unknown = newApiKey().key;
    const altered = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const k of [unknown, altered]) {
      expect(expectRefused(await authorize(bearer(k), 'read'), 401, [k, k.slice(4)])).toBe(`the API key is unknown or revoked; ${HOW}`);
    }
    for (const header of [key, `Basic ${key}`, `Bearer`, `Bearer ${key} extra`, `Bearer ${key.slice(0, -1)}`, `Bearer dashboard-token-1234`, `Bearer ${key}\u0000`, 'x'.repeat(10_000)]) {
      const detail = expectRefused(await authorize(header, 'read'), 401, [key.slice(4), 'dashboard-token-1234']);
      expect(detail).toBe(`the Authorization header is not "Bearer KEY" with a campaignd API key (cdk_ and 43 characters); ${HOW}`);
    }
  });

  it('a key revoked through one instance is refused by another at its very next request', async () => {
    const h = await store();
    const key = await keyOf(h, 'crm', 'write');
    const clock = new ManualClock(T0);
    const a = createAuthorizer({ db: h.db, clock, loopback: false });
    const b = createAuthorizer({ db: h.db, clock, loopback: false });
    expect((await a(bearer(key), 'write')).ok).toBe(true);
    expect((await b(bearer(key), 'write')).ok).toBe(true);
    expect(await revokeApiKey(h.db, 'crm', clock.now())).toBe(true);
    expectRefused(await a(bearer(key), 'read'), 401, [key]);
    expectRefused(await b(bearer(key), 'write'), 401, [key]);
  });

  it('records the last use at most once a minute, so a busy client does not turn every read into a write', async () => {
    const h = await store();
    const key = await keyOf(h, 'crm', 'read');
    const clock = new ManualClock(T0);
    const authorize = createAuthorizer({ db: h.db, clock, loopback: false });
    const lastUsed = async () => (await listApiKeys(h.db))[0]!.last_used_at;
    expect(await lastUsed()).toBeNull();

    await authorize(bearer(key), 'read');
    expect(await lastUsed()).toBe(T0);
    // Count the writes: every statement the store runs on the api_keys table.
    let writes = 0;
    const spied = createAuthorizer({
      db: h.db.withPlugin({
        transformQuery: (args) => {
          if (args.node.kind === 'UpdateQueryNode') writes++;
          return args.node;
        },
        transformResult: async (args) => args.result,
      }),
      clock,
      loopback: false,
    });
    for (let i = 0; i < 30; i++) {
      await clock.advance(1_000);
      expect((await spied(bearer(key), 'read')).ok).toBe(true);
    }
    expect(writes).toBe(0);
    expect(await lastUsed()).toBe(T0);
    await clock.advance(30_000); // a minute after the recorded use
    await spied(bearer(key), 'read');
    expect(writes).toBe(1);
    expect(await lastUsed()).toBe(T0 + 60_000);
    // A refused request (403) records nothing.
    await clock.advance(120_000);
    await spied(bearer(key), 'write');
    expect(writes).toBe(1);
  });
});

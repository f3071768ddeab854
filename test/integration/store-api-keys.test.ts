// API keys in the store (migration 0014, src/store/api-keys.ts and the key functions of
// src/api/keys.ts that use it), on SQLite and (vitest.postgres.config.ts) PostgreSQL: a
// name is unique among the keys not revoked, the table holds no key, a revoked key is
// not found, and last_used_at is written at most once a minute.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiKey, findApiKey, newApiKey } from '../../src/api/keys.js';
import { activeApiKeysWithPrefix, anyApiKeyExists, insertApiKey, listApiKeys, revokeApiKey, touchApiKey } from '../../src/store/api-keys.js';
import { copyStore } from '../../src/store/copy.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);
const MINUTE = 60_000;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function store(maxConnections?: number): Promise<DatabaseHandle> {
  const h = await openTestStore(maxConnections ? { maxConnections } : {});
  closers.push(() => h.close());
  await migrateToLatest(h.db, { clock: { now: () => 0 } });
  return h;
}

describe(`API keys in the store (${testDialect})`, () => {
  it('stores the hash and prefix, never the key; lists every key oldest first without the hash', async () => {
    const h = await store();
    expect(await anyApiKeyExists(h.db)).toBe(false);
    const crm = await createApiKey(h.db, 'crm', 'write', T0);
    const form = await createApiKey(h.db, 'web-form', 'read', T0 + 1000);
    expect(crm && form).toBeTruthy();
    expect(await anyApiKeyExists(h.db)).toBe(true);

    const rows = await h.db.selectFrom('api_keys').selectAll().orderBy('id').execute();
    const stored = JSON.stringify(rows);
    for (const made of [crm!, form!]) {
      expect(stored).not.toContain(made.key);
      expect(stored).not.toContain(made.key.slice(12));
    }
    expect(rows.map((r) => [r.name, r.scope, r.prefix, r.key_hash])).toEqual([
      ['crm', 'write', crm!.prefix, crm!.hash],
      ['web-form', 'read', form!.prefix, form!.hash],
    ]);

    expect(await listApiKeys(h.db)).toEqual([
      { name: 'crm', scope: 'write', prefix: crm!.prefix, created_at: T0, last_used_at: null, revoked_at: null },
      { name: 'web-form', scope: 'read', prefix: form!.prefix, created_at: T0 + 1000, last_used_at: null, revoked_at: null },
    ]);
  });

  it('refuses a second key of the same name while the first is not revoked, and allows the name again after', async () => {
    const h = await store();
    expect(await createApiKey(h.db, 'crm', 'write', T0)).not.toBeNull();
    expect(await createApiKey(h.db, 'crm', 'read', T0 + 1)).toBeNull();
    expect(await listApiKeys(h.db)).toHaveLength(1);

    expect(await revokeApiKey(h.db, 'crm', T0 + 2)).toBe(true);
    const again = await createApiKey(h.db, 'crm', 'read', T0 + 3);
    expect(again).not.toBeNull();
    expect((await listApiKeys(h.db)).map((k) => [k.name, k.scope, k.revoked_at])).toEqual([
      ['crm', 'write', T0 + 2],
      ['crm', 'read', null],
    ]);
    // Revoking by name reaches the key not revoked, once.
    expect(await revokeApiKey(h.db, 'crm', T0 + 4)).toBe(true);
    expect(await revokeApiKey(h.db, 'crm', T0 + 5)).toBe(false);
    expect((await listApiKeys(h.db)).map((k) => k.revoked_at)).toEqual([T0 + 2, T0 + 4]);
  });

  it('inserts of one name at once (four connections on PostgreSQL): exactly one wins', async () => {
    const h = await store(4);
    const keys = [newApiKey(), newApiKey(), newApiKey(), newApiKey()];
    const won = await Promise.all(keys.map((k) => insertApiKey(h.db, { name: 'same', scope: 'read', prefix: k.prefix, keyHash: k.hash }, T0)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await listApiKeys(h.db)).toHaveLength(1);
  });

  it('finds a key by its prefix and hash only while it is not revoked; an unknown or altered key is not found', async () => {
    const h = await store();
    const crm = (await createApiKey(h.db, 'crm', 'write', T0))!;
    expect(await findApiKey(h.db, crm.key)).toMatchObject({ name: 'crm', scope: 'write', last_used_at: null });
    expect(await findApiKey(h.db, newApiKey().key)).toBeNull();
    // The same prefix with another tail: found by prefix, refused by the hash.
    const altered = `${crm.key.slice(0, -1)}${crm.key.endsWith('A') ? 'B' : 'A'}`;
    expect(await activeApiKeysWithPrefix(h.db, crm.prefix)).toHaveLength(1);
    expect(await findApiKey(h.db, altered)).toBeNull();
    expect(await findApiKey(h.db, 'not-a-key')).toBeNull();

    expect(await revokeApiKey(h.db, 'crm', T0 + 1)).toBe(true);
    expect(await findApiKey(h.db, crm.key)).toBeNull();
    expect(await activeApiKeysWithPrefix(h.db, crm.prefix)).toEqual([]);
    // A revoked key still counts as a key having existed.
    expect(await anyApiKeyExists(h.db)).toBe(true);
  });

  it('two keys that share a prefix are told apart by the hash', async () => {
    const h = await store();
    const a = newApiKey(() => Buffer.alloc(32, 7));
    const bytes = Buffer.alloc(32, 7);
    bytes[31] = 8;
    const b = newApiKey(() => bytes);
    expect(a.prefix).toBe(b.prefix);
    await insertApiKey(h.db, { name: 'a', scope: 'read', prefix: a.prefix, keyHash: a.hash }, T0);
    await insertApiKey(h.db, { name: 'b', scope: 'write', prefix: b.prefix, keyHash: b.hash }, T0);
    expect((await findApiKey(h.db, a.key))?.name).toBe('a');
    expect((await findApiKey(h.db, b.key))?.name).toBe('b');
  });

  it('writes last_used_at at most once a minute, whoever asks', async () => {
    const h = await store();
    const crm = (await createApiKey(h.db, 'crm', 'read', T0))!;
    const id = (await findApiKey(h.db, crm.key))!.id;
    const lastUsed = async () => (await listApiKeys(h.db))[0]!.last_used_at;

    await touchApiKey(h.db, id, T0 + 5_000, MINUTE);
    expect(await lastUsed()).toBe(T0 + 5_000);
    // Within the minute (from this or another process): not written again.
    await touchApiKey(h.db, id, T0 + 5_000 + MINUTE - 1, MINUTE);
    expect(await lastUsed()).toBe(T0 + 5_000);
    await touchApiKey(h.db, id, T0 + 5_000 + MINUTE, MINUTE);
    expect(await lastUsed()).toBe(T0 + 5_000 + MINUTE);
    expect((await findApiKey(h.db, crm.key))!.last_used_at).toBe(T0 + 5_000 + MINUTE);
  });

  it('store copy takes the keys along: they still work on the new database, and new ones get new ids', async () => {
    const source = await openDatabase(':memory:');
    closers.push(() => source.close());
    await migrateToLatest(source.db, { clock: { now: () => 0 } });
    const crm = (await createApiKey(source.db, 'crm', 'write', T0))!;
    await createApiKey(source.db, 'old', 'read', T0);
    await revokeApiKey(source.db, 'old', T0 + 1);

    const h = await store();
    await copyStore(source.db, h.db);
    expect(await listApiKeys(h.db)).toEqual(await listApiKeys(source.db));
    expect((await findApiKey(h.db, crm.key))?.name).toBe('crm');
    const next = (await createApiKey(h.db, 'next', 'read', T0 + 2))!;
    expect((await findApiKey(h.db, next.key))!.id).toBe(3);
  });
});

import type { Kysely } from 'kysely';
import { prepared } from './prepared.js';
import type { ApiKeyScope, Database } from './types.js';

// API keys (migration 0014_api_keys). The store never sees a key: src/api/keys.ts makes
// the key, its hash and its prefix, and checks a request's key against these rows. Times
// are epoch ms by the caller's clock. Nothing here caches: a key revoked by one process
// is refused by every other at its next read.

/** A key as `api-key list` shows it: everything but the hash. */
export interface ApiKeyListing {
  name: string;
  scope: ApiKeyScope;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** A key not revoked, as a request's key is checked against it. */
export interface ActiveApiKey {
  id: number;
  name: string;
  scope: ApiKeyScope;
  key_hash: string;
  last_used_at: number | null;
}

const orNull = (v: number | null): number | null => (v === null ? null : Number(v));

/**
 * Stores a new key; false (nothing written) when a key not revoked already has this
 * name. One statement, so two commands creating the same name at once cannot both win.
 */
export async function insertApiKey(db: Kysely<Database>, key: { name: string; scope: ApiKeyScope; prefix: string; keyHash: string }, now: number): Promise<boolean> {
  const row = await db
    .insertInto('api_keys')
    .values({ name: key.name, scope: key.scope, prefix: key.prefix, key_hash: key.keyHash, created_at: now, last_used_at: null, revoked_at: null })
    .onConflict((oc) => oc.column('name').where('revoked_at', 'is', null).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Every key, revoked ones too, oldest first. */
export async function listApiKeys(db: Kysely<Database>): Promise<ApiKeyListing[]> {
  const rows = await db.selectFrom('api_keys').select(['name', 'scope', 'prefix', 'created_at', 'last_used_at', 'revoked_at']).orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), last_used_at: orNull(r.last_used_at), revoked_at: orNull(r.revoked_at) }));
}

/** Revokes the key named `name` that is not revoked yet; false when there is none. */
export async function revokeApiKey(db: Kysely<Database>, name: string, now: number): Promise<boolean> {
  const r = await db.updateTable('api_keys').set({ revoked_at: now }).where('name', '=', name).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The keys not revoked whose prefix is `prefix` (one, barring a 1-in-2^48 coincidence). */
export async function activeApiKeysWithPrefix(db: Kysely<Database>, prefix: string): Promise<ActiveApiKey[]> {
  const rows = await activeByPrefixQuery.rows(db, { prefix });
  return rows.map((r) => ({ ...r, id: Number(r.id), last_used_at: orNull(r.last_used_at) }));
}

// Every API request runs this lookup (a key is never cached): compiled once, not per request.
const activeByPrefixQuery = prepared((db, v: { prefix: string }) =>
  db.selectFrom('api_keys').select(['id', 'name', 'scope', 'key_hash', 'last_used_at']).where('prefix', '=', v.prefix).where('revoked_at', 'is', null),
);

/** Whether any key was ever created (revoked ones count). */
export async function anyApiKeyExists(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Records that key `id` was used at `now`, unless that was already recorded less than
 * `minIntervalMs` before (by this process or another): a busy client then costs no write.
 */
export async function touchApiKey(db: Kysely<Database>, id: number, now: number, minIntervalMs: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - minIntervalMs)]))
    .execute();
}

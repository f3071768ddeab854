import type { Kysely } from 'kysely';
import { anyApiKeyExists, touchApiKey } from '../store/api-keys.js';
import type { ApiKeyScope, Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';
import type { AuthResult } from './deps.js';
import { findApiKey, isApiKeyFormat } from './keys.js';

// Who may use the API. A request carries `Authorization: Bearer KEY`; the key is looked
// up in the store on every request (no cache of valid keys), so a key revoked on one
// instance is refused by all of them at their next request. A `read` key opens the GET
// routes, a `write` key every route.
//
// The exposure rule is the dashboard's: on a loopback http.listen, before any key has been
// created, requests without a key are let through (nobody but this machine can reach the
// address, as with a dashboard without a token). Once a key exists (revoked ones count, so
// that revoking the last key does not open the API again), or on any other address, every
// request needs a key. What a client sent is never repeated in an answer.

/** Decides whether a request with this Authorization header may use a route of this scope (ApiDeps.authorize). */
export type Authorize = (authorizationHeader: string | undefined, scope: ApiKeyScope) => Promise<AuthResult>;

export interface AuthorizerOptions {
  db: Kysely<Database>;
  /**
   * Where the key lookups read (every request makes one): on SQLite a read-only connection,
   * so that checking a key never queues behind a transaction on the writing one. Absent: `db`.
   */
  readDb?: Kysely<Database>;
  clock: Pick<Clock, 'now'>;
  /** Whether http.listen is a loopback address (config/start-checks.ts isLoopback). */
  loopback: boolean;
  /** How long after a recorded use the next one is recorded; default a minute. */
  touchEveryMs?: number;
}

/** A key's last use is written at most this often, so a busy client does not make every GET a write. */
export const TOUCH_EVERY_MS = 60_000;

const CREATE = 'an operator creates one with "campaignd api-key create NAME --scope read|write"';
const BEARER = /^Bearer +(\S+) *$/i;

export function createAuthorizer(opts: AuthorizerOptions): Authorize {
  const { db, clock } = opts;
  const reader = opts.readDb ?? db;
  const touchEvery = opts.touchEveryMs ?? TOUCH_EVERY_MS;
  // Keys are never deleted, so once one exists it always will: only that answer is kept.
  let keysExist = false;
  const keysRequired = async (): Promise<boolean> => {
    if (!opts.loopback || keysExist) return true;
    keysExist = await anyApiKeyExists(reader);
    return keysExist;
  };

  return async (header, scope) => {
    if (header === undefined || header.trim() === '') {
      if (!(await keysRequired())) return { ok: true, keyName: null };
      return { ok: false, status: 401, detail: `this API needs a key: send it as "Authorization: Bearer KEY"; ${CREATE}` };
    }
    const key = BEARER.exec(header)?.[1];
    if (key === undefined || !isApiKeyFormat(key)) {
      return { ok: false, status: 401, detail: `the Authorization header is not "Bearer KEY" with a campaignd API key (cdk_ and 43 characters); ${CREATE}` };
    }
    const found = await findApiKey(reader, key);
    if (!found) return { ok: false, status: 401, detail: `the API key is unknown or revoked; ${CREATE}` };
    if (scope === 'write' && found.scope !== 'write') {
      return { ok: false, status: 403, detail: `the API key "${found.name}" may only read; this route changes data and needs a key created with --scope write` };
    }
    const now = clock.now();
    if (found.last_used_at === null || now - found.last_used_at >= touchEvery) await touchApiKey(db, found.id, now, touchEvery);
    return { ok: true, keyName: found.name };
  };
}

import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { deleteSession, extendSession, insertSession, sessionExpiry, sweepSessions } from '../store/dashboard-sessions.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';

// Dashboard sessions, kept in the store so that signing out ends a session on every
// instance sharing the database. The cookie holds a random id (32 bytes); the store holds
// HMAC(token, id), so the token is in neither and a new token ends all earlier sessions.
// A session runs out after SESSION_TTL_MS without a request; each request moves the end
// forward (written at most once a minute, not on every 2-s refresh).

export const SESSION_TTL_MS = 12 * 3_600_000;
/** A used session's end is written again once it is this much older than a fresh one's. */
const SLIDE_STEP_MS = 60_000;
/** Expired rows are deleted at a sign-in, and otherwise at most this often. */
const SWEEP_EVERY_MS = 3_600_000;
/** base64url of 32 bytes. */
const ID_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface Sessions {
  /** A new session: its id, for the cookie. */
  start(): Promise<string>;
  /** Whether `id` is a live session; a live one is extended. */
  check(id: string | undefined): Promise<boolean>;
  /** Ends the session `id` (when there is one). */
  end(id: string | undefined): Promise<void>;
}

export function createSessions(opts: { token: string; db: Kysely<Database>; clock: Clock; ttlMs?: number }): Sessions {
  const { db, clock } = opts;
  const ttl = opts.ttlMs ?? SESSION_TTL_MS;
  const hash = (id: string): string => crypto.createHmac('sha256', opts.token).update(`campaignd-dashboard:session:${id}`).digest('hex');
  let sweptAt = Number.NEGATIVE_INFINITY;
  const sweep = async (now: number): Promise<void> => {
    sweptAt = now;
    await sweepSessions(db, now);
  };
  return {
    async start() {
      const now = clock.now();
      await sweep(now);
      const id = crypto.randomBytes(32).toString('base64url');
      await insertSession(db, hash(id), now, now + ttl);
      return id;
    },
    async check(id) {
      if (id === undefined || !ID_FORMAT.test(id)) return false;
      const now = clock.now();
      if (now - sweptAt >= SWEEP_EVERY_MS) await sweep(now);
      const idHash = hash(id);
      const expires = await sessionExpiry(db, idHash, now);
      if (expires === undefined) return false;
      if (now + ttl - expires >= SLIDE_STEP_MS) await extendSession(db, idHash, now, now + ttl);
      return true;
    },
    async end(id) {
      if (id !== undefined && ID_FORMAT.test(id)) await deleteSession(db, hash(id));
    },
  };
}

import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { withSessionLock, type SessionLockOptions } from './session-lock.js';
import type { Database } from './types.js';

// Several instances on one PostgreSQL database (docs/design.md §10) start from the same config
// and each writes it into the store: campaigns, lead files, the suppression list. Two doing
// it at once (both started by one `docker compose up`) would race on the same rows, so on
// PostgreSQL that work holds a session advisory lock, on one pinned connection, waiting as
// long as another instance's sync of a large lead file takes, but not for a frozen one
// (session-lock.ts): the holder shows it is alive on `opts.keepalive`'s clock. SQLite has
// one daemon per file: nothing to wait for.

/** The advisory lock's key: "campaignd" as a number, so that other applications' keys stay apart. */
export const SETUP_LOCK_KEY = 0x63616d70;

/** Runs `fn` while no other instance runs its own config sync; `fn` gets the connection to use. */
export async function withSetupLock<T>(db: Kysely<Database>, fn: (db: Kysely<Database>) => Promise<T>, opts: SessionLockOptions = {}): Promise<T> {
  if (!isPostgres(db)) return fn(db);
  return withSessionLock(db, SETUP_LOCK_KEY, opts, fn);
}

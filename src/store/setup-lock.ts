import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// Several instances on one PostgreSQL database (docs/design.md §10) start from the same config
// and each writes it into the store: campaigns, lead files, the suppression list. Two doing
// it at once (both started by one `docker compose up`) would race on the same rows, so on
// PostgreSQL that work holds a session advisory lock, on one pinned connection. SQLite has
// one daemon per file: nothing to wait for.

/** The advisory lock's key: "campaignd" as a number, so that other applications' keys stay apart. */
const SETUP_LOCK_KEY = 0x63616d70;

/** Runs `fn` while no other instance runs its own config sync; `fn` gets the connection to use. */
export async function withSetupLock<T>(db: Kysely<Database>, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (!isPostgres(db)) return fn(db);
  return db.connection().execute(async (conn) => {
    // The session's lock_timeout (postgres.ts) is for row locks; another instance's sync of a
    // large lead file may take longer, and waiting for it is right. RESET restores it.
    await sql`set lock_timeout = 0`.execute(conn);
    try {
      await sql`select pg_advisory_lock(${SETUP_LOCK_KEY})`.execute(conn);
    } finally {
      await sql`reset lock_timeout`.execute(conn);
    }
    try {
      return await fn(conn);
    } finally {
      await sql`select pg_advisory_unlock(${SETUP_LOCK_KEY})`.execute(conn);
    }
  });
}

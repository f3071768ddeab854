import { sql, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// A transaction whose COMMIT survives a power cut, not only a process crash.
//
// The store runs WAL with synchronous=NORMAL (database.ts): a commit is written to the WAL
// but not fsynced, so an OS crash or power cut may lose the last transactions. That is
// fine for everything the call list can tell again, but not for the intent row committed
// before make_call (rule 6, docs/design.md §3.6): lose it and the daemon no longer knows the call
// may exist, and may dial the lead a second time. synchronous=FULL makes SQLite fsync the
// WAL at that COMMIT. SQLite refuses to change the setting inside a transaction ("Safety
// level may not be changed inside a transaction"), so it is switched around BEGIN and
// COMMIT, on one reserved connection so that no other query of this process slips in
// between with the wrong setting.
//
// On PostgreSQL every commit is already flushed to the WAL before it returns
// (synchronous_commit on, its default), so a durable transaction is a plain one.

/** The connection's setting outside durable transactions (database.ts sets it at open). */
export const SYNCHRONOUS_DEFAULT = 'NORMAL';
/** The setting for a durable transaction's COMMIT: the WAL is fsynced before COMMIT returns. */
export const SYNCHRONOUS_DURABLE = 'FULL';

/**
 * Runs `fn` in a transaction committed with synchronous=FULL: when the returned promise
 * resolves, the commit is on stable storage. The connection returns to NORMAL afterwards,
 * whether the transaction committed or rolled back.
 */
export async function durableTransaction<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (isPostgres(db)) return db.transaction().execute(fn);
  return db.connection().execute(async (conn) => {
    await sql`pragma synchronous = ${sql.raw(SYNCHRONOUS_DURABLE)}`.execute(conn);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql`pragma synchronous = ${sql.raw(SYNCHRONOUS_DEFAULT)}`.execute(conn);
    }
  });
}

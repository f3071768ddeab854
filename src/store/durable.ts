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
//
// A store opened by the daemon's factory (database.ts) does better than FULL: FULL makes
// SQLite fsync inside COMMIT, on the daemon's one thread, where a slow disk holds every HTTP
// request and webhook for the fsync's duration (2 ms typically, 15–25 ms at its tail on a
// busy disk; each dial pass has one). The factory registers a sync of its WAL file instead:
// the transaction commits with NORMAL (its frames written to the WAL), then the WAL file is
// fdatasync'ed on libuv's thread pool, and only then does the promise resolve. What resolves
// is on stable storage either way; the thread serves requests while the disk works. A
// checkpoint meanwhile does not undo it: SQLite syncs the WAL before copying it into the
// database file and syncs that file before the WAL is started over.

/** The connection's setting outside durable transactions (database.ts sets it at open). */
export const SYNCHRONOUS_DEFAULT = 'NORMAL';
/** The setting for a durable transaction's COMMIT: the WAL is fsynced before COMMIT returns. */
export const SYNCHRONOUS_DURABLE = 'FULL';

/** Brings a store's WAL file, as written so far, to stable storage without blocking the thread. */
export type WalSync = () => Promise<void>;

// Keyed by the dialect's adapter, which a database and its transactions share.
const walSyncs = new WeakMap<object, WalSync>();

/** Makes `db`'s durable transactions commit with NORMAL and then await `sync` (database.ts, file stores in WAL mode). */
export function registerWalSync(db: Kysely<Database>, sync: WalSync): void {
  walSyncs.set(db.getExecutor().adapter, sync);
}

/** The WAL sync registered for `db`, if any (a test harness wraps it). */
export function walSyncOf(db: Kysely<Database>): WalSync | undefined {
  return walSyncs.get(db.getExecutor().adapter);
}

/**
 * Runs `fn` in a transaction whose commit is on stable storage when the returned promise
 * resolves: through the registered WAL sync, else committed with synchronous=FULL (the
 * connection returns to NORMAL afterwards, whether the transaction committed or rolled back).
 */
export async function durableTransaction<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (isPostgres(db)) return db.transaction().execute(fn);
  const walSync = walSyncs.get(db.getExecutor().adapter);
  if (walSync) {
    const result = await db.transaction().execute(fn);
    // A failed sync fails the transaction's caller as a failed COMMIT would: nothing it
    // committed may be acted on as durable (the claims stay `dialing`, recovered at start).
    await walSync();
    return result;
  }
  return db.connection().execute(async (conn) => {
    await sql`pragma synchronous = ${sql.raw(SYNCHRONOUS_DURABLE)}`.execute(conn);
    try {
      return await conn.transaction().execute(fn);
    } finally {
      await sql`pragma synchronous = ${sql.raw(SYNCHRONOUS_DEFAULT)}`.execute(conn);
    }
  });
}

import { sql, type Kysely, type KyselyPlugin } from 'kysely';
import type { Clock } from '../time/clock.js';
import { INSUFFICIENT_PRIVILEGE, LOCK_NOT_AVAILABLE, sqlState } from './pg-errors.js';

// A PostgreSQL session advisory lock that a frozen holder cannot keep forever.
//
// The migration run and the config sync each hold one while several instances start from
// the same files (migrate.ts, setup-lock.ts). A session lock outside a transaction is
// released only when its holder unlocks or its session ends, and a paused VM or a SIGSTOPped
// process keeps its socket open: the server cannot tell it from a slow holder, so every
// other instance's start-up (and every SIGHUP reload) would wait until it woke, perhaps
// never. idle_in_transaction_session_timeout (postgres.ts) does not cover it (the holder sits
// between transactions), and idle_session_timeout would also end a live holder that nobody
// waits for.
//
// So the waiting side judges: it waits in steps of lock_timeout, and between two steps looks
// at the holder's session. A holder that has sent nothing for `frozenHolderMs` (state 'idle',
// not in a transaction, not running a statement) is taken for frozen and its session ended
// with pg_terminate_backend, which releases its locks; when it wakes, its next statement
// fails and its setup with it (a start-up exits, a reload reports the error). A live holder
// sends statements all the time, but not while it waits on something else: the config sync
// lists an account's assistants from the service, which may wait out the rate budget or a
// 429 for a minute or more. So a holder given a clock (`keepalive`) shows it is alive: after
// KEEPALIVE_MS without a statement of its own it sends `select 1`. A frozen one cannot.

/** A holder silent for this long is taken for frozen (see above). */
export const FROZEN_HOLDER_MS = 60_000;

/** A holder with a clock sends a statement after this long without one (or a quarter of its bound, if less). */
const KEEPALIVE_MS = 10_000;

export interface SessionLockOptions {
  /** A holder whose session has been idle this long has its session ended (default FROZEN_HOLDER_MS). */
  frozenHolderMs?: number;
  /** Told once when the lock was not free within the first step: another session holds it (for the log: why start-up waits). */
  onWaiting?: () => void;
  /** Told of each holder's session ended (its server pid and how long it had been idle), for the log. */
  onFrozenHolderEnded?: (holder: { pid: number; idleMs: number }) => void;
  /**
   * Told once when the server refuses to end a frozen holder's session (our role may not
   * signal the holder's: grant it pg_signal_backend, or run every instance as one role);
   * the wait goes on, as it did before this module.
   */
  onFrozenHolderKept?: (reason: string) => void;
  /** The holder's clock: while `fn` runs, a statement at least every KEEPALIVE_MS of it (see above). */
  keepalive?: Pick<Clock, 'now' | 'setTimer'>;
}

/** The holder ended by the waiter, as `onFrozenHolderEnded` is told. */
interface EndedHolder {
  pid: number;
  idle_ms: number;
}

/**
 * Runs `fn` on one pinned connection while it holds the session advisory lock `key`; `fn`
 * gets that connection. PostgreSQL only (SQLite's callers need no lock).
 */
export async function withSessionLock<T>(db: Kysely<any>, key: number, opts: SessionLockOptions, fn: (conn: Kysely<any>) => Promise<T>): Promise<T> {
  const frozenMs = opts.frozenHolderMs ?? FROZEN_HOLDER_MS;
  // Four looks within the bound, at most one every 5 s: a frozen holder is ended at most a
  // quarter of the bound (or 5 s) after it has been silent for the bound.
  const stepMs = Math.max(10, Math.min(5_000, Math.floor(frozenMs / 4)));
  return db.connection().execute(async (conn) => {
    // The session's lock_timeout (postgres.ts) is for row locks; here it is the step. RESET restores it.
    await sql`select set_config('lock_timeout', ${`${stepMs}ms`}, false)`.execute(conn);
    let refused = false;
    let waited = false;
    try {
      for (;;) {
        try {
          await sql`select pg_advisory_lock(${key})`.execute(conn);
          break;
        } catch (err) {
          if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
        }
        if (!waited) opts.onWaiting?.();
        waited = true;
        if (refused) continue;
        try {
          for (const ended of await endFrozenHolder(conn, key, frozenMs)) opts.onFrozenHolderEnded?.({ pid: ended.pid, idleMs: Math.round(ended.idle_ms) });
        } catch (err) {
          if (sqlState(err) !== INSUFFICIENT_PRIVILEGE) throw err;
          refused = true;
          opts.onFrozenHolderKept?.(err instanceof Error ? err.message : String(err));
        }
      }
    } finally {
      await sql`reset lock_timeout`.execute(conn);
    }
    const alive = opts.keepalive ? keepAlive(conn, opts.keepalive, Math.min(KEEPALIVE_MS, Math.floor(frozenMs / 4))) : null;
    try {
      return await fn(alive?.conn ?? conn);
    } finally {
      await alive?.stop();
      await sql`select pg_advisory_unlock(${key})`.execute(conn);
    }
  });
}

/**
 * The holder's side: `conn` as `fn` uses it, noting when each of its statements ends, and a
 * timer that sends `select 1` once `everyMs` have passed since. The pinned connection runs
 * one statement at a time (kysely queues the others), so the keepalive waits for a statement
 * or transaction of `fn` to end, and never runs inside one.
 */
function keepAlive(conn: Kysely<any>, clock: Pick<Clock, 'now' | 'setTimer'>, everyMs: number): { conn: Kysely<any>; stop(): Promise<void> } {
  let last = clock.now();
  const tracker: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      last = clock.now();
      return args.result;
    },
  };
  const tracked = conn.withPlugin(tracker);
  let sending: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let cancel = (): void => {};
  const tick = (): void => {
    if (stopped) return;
    const quietMs = clock.now() - last;
    if (quietMs >= everyMs) {
      // An error here is the connection's; fn's next statement meets it and reports it.
      sending = sql`select 1`.execute(tracked).catch(() => undefined);
      cancel = clock.setTimer(everyMs, tick);
    } else cancel = clock.setTimer(everyMs - quietMs, tick);
  };
  cancel = clock.setTimer(everyMs, tick);
  return {
    conn: tracked,
    async stop() {
      stopped = true;
      cancel();
      await sending;
    },
  };
}

/**
 * Ends the session holding `key` if it has been idle for `frozenMs` or more, in one
 * statement (so a holder that has just sent something is never ended on an older look):
 * the inner query picks it, and only its row reaches pg_terminate_backend in the outer
 * select list. A key below 2^31, as ours are, is objid with classid 0 in pg_locks
 * (objsubid 1: the one-bigint form of the lock functions).
 */
async function endFrozenHolder(conn: Kysely<any>, key: number, frozenMs: number): Promise<EndedHolder[]> {
  const { rows } = await sql<EndedHolder & { ended: boolean }>`
    select f.pid, f.idle_ms, pg_terminate_backend(f.pid) as ended
    from (
      select a.pid, extract(epoch from clock_timestamp() - a.state_change) * 1000 as idle_ms
      from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.granted and l.classid = 0 and l.objid = ${key}::bigint::oid and l.objsubid = 1
        and l.database = (select oid from pg_database where datname = current_database())
        and a.state = 'idle' and a.state_change < clock_timestamp() - ${frozenMs} * interval '1 millisecond'
      offset 0
    ) f`.execute(conn);
  return rows.filter((r) => r.ended).map((r) => ({ pid: Number(r.pid), idle_ms: Number(r.idle_ms) }));
}

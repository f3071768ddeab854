import type { Kysely } from 'kysely';
import { insertDaemonRow, liveDaemonRows, stopLiveDaemonRows } from '../store/daemons.js';
import type { Database, DialingMode } from '../store/types.js';

// The daemon's row in `daemons`: how `status` knows whether a daemon runs, and how a
// second daemon on the same SQLite file is refused instead of double-dialling.

/** Heartbeats older than this mean the daemon is gone (killed, or its machine stopped). */
export const HEARTBEAT_STALE_MS = 10_000;

/** Thrown when another live daemon already works on this database. */
export class DatabaseInUseError extends Error {
  constructor(readonly other: { pid: number; hostname: string }) {
    super(`the database is in use by another campaignd (pid ${other.pid} on ${other.hostname}); stop it first, or point this one at another database`);
    this.name = 'DatabaseInUseError';
  }
}

/**
 * Registers this daemon, refusing when another one heartbeats on the same database. With
 * `shared` (PostgreSQL, docs/design.md §10) several instances run on one database and the lease
 * decides which one dials: nobody is refused, and other instances' rows are left alone.
 */
export async function acquireDaemonSlot(
  db: Kysely<Database>,
  me: { instanceId: string; pid: number; hostname: string; version: string; now: number; maxCallsInParallel?: number | undefined; isPidAlive?: (pid: number) => boolean; shared?: boolean; dialingMode?: DialingMode | undefined },
): Promise<void> {
  if (me.shared) return insertDaemonRow(db, me);
  const alive = me.isPidAlive ?? pidAlive;
  const others = await liveDaemonRows(db, me.now - HEARTBEAT_STALE_MS);
  for (const other of others) {
    // A row of this host whose process is gone is a crash leftover, not a rival.
    if (other.hostname === me.hostname && !alive(other.pid)) continue;
    if (other.hostname === me.hostname && other.pid === me.pid) continue;
    throw new DatabaseInUseError(other);
  }
  await stopLiveDaemonRows(db, me.now);
  await insertDaemonRow(db, me);
}

/** Whether a process with this pid exists on this host. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

import type { Kysely } from 'kysely';
import type { ApiStatus, Database } from '../store/types.js';

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
 * `shared` (PostgreSQL, product.md §10) several instances run on one database and the lease
 * decides which one dials: nobody is refused, and other instances' rows are left alone.
 */
export async function acquireDaemonSlot(
  db: Kysely<Database>,
  me: { instanceId: string; pid: number; hostname: string; version: string; now: number; maxCallsInParallel?: number | undefined; isPidAlive?: (pid: number) => boolean; shared?: boolean },
): Promise<void> {
  if (me.shared) return insertDaemonRow(db, me);
  const alive = me.isPidAlive ?? pidAlive;
  const others = await db
    .selectFrom('daemons')
    .selectAll()
    .where('stopped_at', 'is', null)
    .where('heartbeat_at', '>', me.now - HEARTBEAT_STALE_MS)
    .execute();
  for (const other of others) {
    // A row of this host whose process is gone is a crash leftover, not a rival.
    if (other.hostname === me.hostname && !alive(other.pid)) continue;
    if (other.hostname === me.hostname && other.pid === me.pid) continue;
    throw new DatabaseInUseError(other);
  }
  await db.updateTable('daemons').set({ stopped_at: me.now }).where('stopped_at', 'is', null).execute();
  await insertDaemonRow(db, me);
}

async function insertDaemonRow(db: Kysely<Database>, me: { instanceId: string; pid: number; hostname: string; version: string; now: number; maxCallsInParallel?: number | undefined }): Promise<void> {
  await db
    .insertInto('daemons')
    .values({
      instance_id: me.instanceId,
      pid: me.pid,
      hostname: me.hostname,
      version: me.version,
      started_at: me.now,
      heartbeat_at: me.now,
      stopped_at: null,
      api_status: 'unknown',
      api_detail: null,
      problems_json: null,
      // Readers of the store (status, explain, the dashboard) see the daemon-wide cap here.
      max_calls_in_parallel: me.maxCallsInParallel ?? null,
    })
    .execute();
  // Keep the table small: the last 20 runs are plenty for an operator (and a stopped one is never among the live).
  const old = await db.selectFrom('daemons').select('instance_id').orderBy('heartbeat_at', 'desc').offset(20).limit(1000).execute();
  if (old.length > 0) await db.deleteFrom('daemons').where('instance_id', 'in', old.map((o) => o.instance_id)).execute();
}

/** The rate budget's counters since the daemon started (`status` shows them as `daemon.api_requests`). */
export interface ApiCounters {
  /** Requests the budget let through. */
  sent: number;
  /** 429 answers received. */
  rateLimited: number;
  /** Milliseconds requests waited for the budget, summed. */
  budgetWaitMs: number;
}

/** Writes the heartbeat and what the daemon knows about the service (and its request counters, when given). */
export async function heartbeat(
  db: Kysely<Database>,
  instanceId: string,
  beat: { now: number; apiStatus: ApiStatus; apiDetail: string | null; api?: ApiCounters; tokenSource?: string },
): Promise<void> {
  await db
    .updateTable('daemons')
    .set({
      heartbeat_at: beat.now,
      api_status: beat.apiStatus,
      api_detail: beat.apiDetail,
      ...(beat.tokenSource !== undefined ? { token_source: beat.tokenSource } : {}),
      ...(beat.api
        ? { api_requests_sent: beat.api.sent, api_rate_limited: beat.api.rateLimited, budget_wait_ms: Math.round(beat.api.budgetWaitMs) }
        : {}),
    })
    .where('instance_id', '=', instanceId)
    .execute();
}

/** Records the problems of the last config load (broken campaign files…). */
export async function recordConfigProblems(db: Kysely<Database>, problems: string[]): Promise<void> {
  await db
    .updateTable('daemons')
    .set({ problems_json: problems.length > 0 ? JSON.stringify(problems) : null })
    .where('stopped_at', 'is', null)
    .execute();
}

/** Marks a clean stop, so `status` says "stopped" rather than waiting for the heartbeat to age. */
export async function markStopped(db: Kysely<Database>, instanceId: string, now: number): Promise<void> {
  await db.updateTable('daemons').set({ stopped_at: now }).where('instance_id', '=', instanceId).execute();
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

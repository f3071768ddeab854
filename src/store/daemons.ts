import type { Kysely } from 'kysely';
import type { ApiStatus, Database, DaemonRow, DialingMode } from './types.js';

// The `daemons` table: one row per daemon run, written by the running daemon (start,
// heartbeat, config problems, clean stop) and read by `status`, `store copy` and a second
// daemon deciding whether the database is in use (lifecycle/daemon-row.ts decides).

/** Every row, newest heartbeat first. */
export async function daemonRows(db: Kysely<Database>): Promise<DaemonRow[]> {
  return db.selectFrom('daemons').selectAll().orderBy('heartbeat_at', 'desc').execute();
}

/** Rows not marked stopped whose heartbeat is newer than `since`. */
export async function liveDaemonRows(db: Kysely<Database>, since: number): Promise<DaemonRow[]> {
  return db.selectFrom('daemons').selectAll().where('stopped_at', 'is', null).where('heartbeat_at', '>', since).execute();
}

/** Live instances (heartbeat after `since`, not stopped) that dial in `mode`, other than `except`. */
export async function liveInstancesDialing(db: Kysely<Database>, mode: DialingMode, opts: { except: string; since: number }): Promise<DaemonRow[]> {
  return db
    .selectFrom('daemons')
    .selectAll()
    .where('dialing_mode', '=', mode)
    .where('instance_id', '!=', opts.except)
    .where('stopped_at', 'is', null)
    .where('heartbeat_at', '>', opts.since)
    .execute();
}

/** Marks every row not yet stopped as stopped at `now` (crash leftovers, before a new run registers). */
export async function stopLiveDaemonRows(db: Kysely<Database>, now: number): Promise<void> {
  await db.updateTable('daemons').set({ stopped_at: now }).where('stopped_at', 'is', null).execute();
}

/** Adds this daemon's row, and keeps only the newest rows. */
export async function insertDaemonRow(
  db: Kysely<Database>,
  me: { instanceId: string; pid: number; hostname: string; version: string; now: number; maxCallsInParallel?: number | undefined; dialingMode?: DialingMode | undefined },
): Promise<void> {
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
      ...(me.dialingMode ? { dialing_mode: me.dialingMode } : {}),
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

/** One account's state as the daemon writes it with each heartbeat (never its token). */
export interface DaemonAccount {
  name: string;
  api: ApiStatus;
  apiDetail: string | null;
  requests: { sent: number; rateLimited: number };
}

/** Writes the heartbeat and what the daemon knows about the service (and its request counters, when given). */
export async function heartbeat(
  db: Kysely<Database>,
  instanceId: string,
  beat: { now: number; apiStatus: ApiStatus; apiDetail: string | null; api?: ApiCounters; tokenSource?: string; accounts?: DaemonAccount[] },
): Promise<void> {
  await db
    .updateTable('daemons')
    .set({
      heartbeat_at: beat.now,
      api_status: beat.apiStatus,
      api_detail: beat.apiDetail,
      ...(beat.tokenSource !== undefined ? { token_source: beat.tokenSource } : {}),
      ...(beat.accounts !== undefined ? { accounts_json: JSON.stringify(beat.accounts) } : {}),
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

/** Adds lines to the running daemon's problems (a lead file that failed after the load). */
export async function addConfigProblems(db: Kysely<Database>, lines: string[]): Promise<void> {
  const row = await db.selectFrom('daemons').select('problems_json').where('stopped_at', 'is', null).executeTakeFirst();
  const earlier = row?.problems_json ? (JSON.parse(row.problems_json) as unknown[]) : [];
  await db
    .updateTable('daemons')
    .set({ problems_json: JSON.stringify([...earlier, ...lines]) })
    .where('stopped_at', 'is', null)
    .execute();
}

import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { upsertOnceMore } from './upsert-race.js';
import type { Database } from './types.js';

// The active instance's lease (docs/design.md §10): one row, `ha_lease` id 1. Whoever holds an
// unexpired lease claims and dials; the others stand by. Each taking of the lease raises
// `token` by one: the fencing token that every claim carries (attempts.fence_token) and
// that the database checks against this row when the intent is written (migration
// 0008_ha_lease), so an instance frozen past its lease and woken up cannot write one.
//
// Expiry is judged by the DATABASE's clock, in epoch ms: instances on several hosts then
// agree on when a lease ran out whatever their own clocks say. The instance itself only
// keeps a local deadline, shorter than the lease, measured from before it asked (elector.ts).

/** The lease as the database holds it. */
export interface LeaseRow {
  holder: string;
  token: number;
  expires_at: number;
}

/** The database's own time in epoch ms, as the fencing trigger reads it. */
const DB_NOW_MS = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * Takes the lease for `holder` when nobody holds an unexpired one (or `holder` already
 * does): returns the token to fence with, or null when another instance holds it.
 */
export async function takeLease(db: Kysely<Database>, holder: string, leaseMs: number): Promise<number | null> {
  // Two instances of a pair taking the lease of a new database at one moment (upsert-race.ts).
  return upsertOnceMore(() => insertOrTakeLease(db, holder, leaseMs));
}

async function insertOrTakeLease(db: Kysely<Database>, holder: string, leaseMs: number): Promise<number | null> {
  const row = await db
    .insertInto('ha_lease')
    .values({ id: 1, holder, token: 1, expires_at: sql<number>`${DB_NOW_MS} + ${leaseMs}` })
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet({
          holder,
          // A holder taking its own lease back (a restart within the lease) still gets a new
          // token: whatever the previous process claimed is fenced off from the new one.
          token: sql<number>`ha_lease.token + 1`,
          expires_at: sql<number>`${DB_NOW_MS} + ${leaseMs}`,
        })
        .where(sql<boolean>`ha_lease.expires_at <= ${DB_NOW_MS} or ha_lease.holder = ${holder}`),
    )
    .returning('token')
    .executeTakeFirst();
  return row ? Number(row.token) : null;
}

/** Extends the lease held under `token`; false when it was lost (expired, or taken by another instance). */
export async function renewLease(db: Kysely<Database>, holder: string, token: number, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('ha_lease')
    .set({ expires_at: sql<number>`${DB_NOW_MS} + ${leaseMs}` })
    .where('id', '=', 1)
    .where('holder', '=', holder)
    .where('token', '=', token)
    .where(sql<boolean>`expires_at > ${DB_NOW_MS}`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the lease up at a clean stop, so a standby takes over at once instead of after it expires. */
export async function releaseLease(db: Kysely<Database>, holder: string, token: number): Promise<void> {
  await db
    .updateTable('ha_lease')
    .set({ expires_at: 0 })
    .where('id', '=', 1)
    .where('holder', '=', holder)
    .where('token', '=', token)
    .execute();
}

/** The lease row, or undefined before any instance took it (or on SQLite, which has none in use). */
export async function readLease(db: Kysely<Database>): Promise<(LeaseRow & { live: boolean }) | undefined> {
  const row = await db
    .selectFrom('ha_lease')
    .select(['holder', 'token', 'expires_at', sql<boolean>`expires_at > ${DB_NOW_MS}`.as('live')])
    .where('id', '=', 1)
    .executeTakeFirst();
  if (!row) return undefined;
  return { holder: row.holder, token: Number(row.token), expires_at: Number(row.expires_at), live: Boolean(row.live) };
}

/**
 * The instance holding an unexpired lease on PostgreSQL (null: nobody holds one right now);
 * undefined on SQLite, where the lease is not used and the running daemon is active.
 */
export async function leaseHolder(db: Kysely<Database>): Promise<string | null | undefined> {
  if (!isPostgres(db)) return undefined;
  const lease = await readLease(db);
  return lease?.live ? lease.holder : null;
}

import type { Kysely } from 'kysely';
import type { Database } from './types.js';

// Dashboard sign-ins (migration 0013_dashboard_sessions). Rows are keyed by a hash of the
// session id, never the id or the token (src/dashboard/sessions.ts makes both). Times are
// epoch ms by the daemon's clock.

/** Records a new session that runs out at `expiresAt`. */
export async function insertSession(db: Kysely<Database>, idHash: string, now: number, expiresAt: number): Promise<void> {
  await db.insertInto('dashboard_sessions').values({ id_hash: idHash, created_at: now, expires_at: expiresAt }).execute();
}

/** When the session runs out, or undefined when there is no such session or it ran out at or before `now`. */
export async function sessionExpiry(db: Kysely<Database>, idHash: string, now: number): Promise<number | undefined> {
  const row = await db.selectFrom('dashboard_sessions').select('expires_at').where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
  return row ? Number(row.expires_at) : undefined;
}

/** Moves a live session's end to `expiresAt` (never back); false when it is gone or ran out. */
export async function extendSession(db: Kysely<Database>, idHash: string, now: number, expiresAt: number): Promise<boolean> {
  const r = await db
    .updateTable('dashboard_sessions')
    .set({ expires_at: expiresAt })
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .where('expires_at', '<', expiresAt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Ends a session (sign-out); nothing when it is already gone. */
export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
}

/** Deletes every session that ran out at or before `now`; returns how many. */
export async function sweepSessions(db: Kysely<Database>, now: number): Promise<number> {
  const r = await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

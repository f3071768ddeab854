import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// New work for the active instance, which may be another process on PostgreSQL: it listens
// on this channel (pg-wakeups.ts) and looks for due leads on each notification. Migration
// 0008's trigger notifies it when a slot frees; a lead posted through the API on any
// instance does so too, so that it is claimed at once rather than at the next poll.
// SQLite has one daemon per file, which wakes its own engine.

/** The channel migration 0008's trigger notifies (the migration keeps its own copy; migrations are frozen). */
export const SLOT_CHANNEL = 'campaignd_slot';

/** Tells the active instance, at the commit of the caller's transaction (PostgreSQL delivers NOTIFY then), that there is work. */
export async function announceNewWork(db: Kysely<Database>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`select pg_notify(${SLOT_CHANNEL}, '')`.execute(db);
}

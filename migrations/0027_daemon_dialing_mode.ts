import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// How each instance dials (README, "One daemon, a standby pair, or several active
// instances"): 'one-lease' (a standby pair: the active one dials every campaign) or
// 'per-account' (several active instances, each account dialed by the one holding its
// lease); null on SQLite and for rows written by an older daemon. An instance refuses to
// start beside live instances of the other kind: they would dial the same accounts.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').addColumn('dialing_mode', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').dropColumn('dialing_mode').execute();
}

import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Several active instances: an account's requests to the service in the last minute, as its
// holder's budget counts them, so that the next holder's budget starts from them instead of
// from nothing (it would spend the burst the service already counted, and get 429s).
// `recent_requests`: a JSON array of ages in ms; `recent_requests_at`: the database's clock
// (epoch ms) when they were written, so ages stay right across instances whose clocks differ.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_leases').addColumn('recent_requests', 'text').execute();
  await db.schema.alterTable('account_leases').addColumn('recent_requests_at', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_leases').dropColumn('recent_requests_at').execute();
  await db.schema.alterTable('account_leases').dropColumn('recent_requests').execute();
}

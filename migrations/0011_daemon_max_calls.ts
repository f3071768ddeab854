import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// The daemon-wide `max_calls_in_parallel` (live calls over every campaign) was known only
// to the running daemon, so `status`, the dashboard and `explain`, separate readers of the
// store, could not say that it was full. The daemon writes it into its row when it starts;
// null when the daemon config does not set it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').addColumn('max_calls_in_parallel', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').dropColumn('max_calls_in_parallel').execute();
}

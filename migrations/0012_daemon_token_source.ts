import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Where the running daemon reads its API token (`file:PATH` or `env:NAME`, never the token),
// written with each heartbeat, so that `campaignd status` can say how to replace a token the
// service rejects: a file is reread on SIGHUP, an environment variable needs a restart.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').addColumn('token_source', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').dropColumn('token_source').execute();
}

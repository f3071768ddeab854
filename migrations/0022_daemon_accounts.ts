import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Many accounts in one daemon (README, "Many accounts"): each account's state as the
// running daemon knows it (its name, the service's verdict on its token, its request and
// 429 counts), a JSON list written with each heartbeat so that `campaignd status`, a
// separate process, can show it. Never a token.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').addColumn('accounts_json', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('daemons').dropColumn('accounts_json').execute();
}

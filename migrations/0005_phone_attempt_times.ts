import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// max_attempts_per_number (docs/design.md §11) counts a number's attempts in a rolling
// window before each claim: an index on (phone_number, created_at) reads just those,
// newest first, however many attempts the table holds.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('attempts_phone_created').ifNotExists().on('attempts').columns(['phone_number', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('attempts_phone_created').ifExists().execute();
}

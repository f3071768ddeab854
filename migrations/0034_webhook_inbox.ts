import { type Kysely } from 'kysely';
import { integer, withId } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Several active instances: a post-call webhook reaches any instance, but only the instance
// holding the call's account writes that account's campaigns. Another instance puts the
// delivery here (and notifies the holder), and the holder applies it in its own group commit,
// deleting the row in the same transaction. Applied where it arrived, a delivery wrote the
// same campaign's counter rows as the holder's own transactions, in another order: PostgreSQL
// broke the deadlocks after a second each (3 instances, 200 accounts). `payload` is the
// delivery's JSON as it came; `received_at` the receiving instance's clock (epoch ms).
// SQLite gets the table too (one daemon per file never uses it), so both schemas stay one.

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('webhook_inbox'))
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('received_at', integer(db), (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_inbox_account').on('webhook_inbox').columns(['account', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_inbox').ifExists().execute();
}

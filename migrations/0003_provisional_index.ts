import { type Kysely, sql } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// A webhook success is provisional until the call list shows who answered (the webhook
// carries no answered_by; a machine means a voicemail, which rule 5 retries). Every poll
// round and every "is this campaign complete?" look for those attempts, and without an
// index each look read the whole attempts table (1.5 ms at 3,000 attempts, growing with
// every call ever made). Provisional attempts are few at any time (a poll confirms them
// or finalises them), so a partial index over just them stays tiny.
// The WHERE is written as literals: queries must repeat them for SQLite to use it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('attempts_provisional')
    .on('attempts')
    .columns(['campaign_id', 'ended_at'])
    .where(sql.ref('state'), '=', sql.lit('ended'))
    .where(sql.ref('outcome_source'), '=', sql.lit('webhook'))
    .where(sql.ref('outcome'), '=', sql.lit('success'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('attempts_provisional').ifExists().execute();
}

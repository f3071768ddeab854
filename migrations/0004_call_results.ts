import type { Kysely } from 'kysely';
import { integer } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// What the service reported of each attempt's call (docs/design.md §9), one row per
// attempt, filled by whichever source came first (post-call webhook or call list) and
// completed by the other. A table of its own rather than columns on `attempts`: the
// engine's hot updates of an attempt never rewrite a row that may hold a 1 MB
// transcript, and erasing personal data (retention, `forget`) touches only this table.
//
// Portable kysely only: `double precision`, `bigint` and `text` mean the same on SQLite
// and PostgreSQL; JSON is kept as text so that both read it the same way.

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  await db.schema
    .createTable('call_results')
    .addColumn('attempt_id', int, (c) => c.primaryKey().references('attempts.id').onDelete('cascade'))
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('lead_id', int, (c) => c.notNull())
    .addColumn('call_id', 'text')
    // the service's own words, as it said them
    .addColumn('status', 'text')
    .addColumn('answered_by', 'text')
    .addColumn('duration_seconds', 'double precision')
    // epoch milliseconds, read from the service's created_at / finished_at
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .addColumn('cost', 'double precision')
    .addColumn('recording_url', 'text')
    // JSON: a string or a list of turns, as the service sent it
    .addColumn('transcript_json', 'text')
    .addColumn('extracted_json', 'text')
    .addColumn('evaluation_json', 'text')
    // webhook | poll | webhook,poll | poll,webhook: who said it first, then who completed it
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // when the personal fields were erased (retention or `campaignd forget`); null while kept
    .addColumn('erased_at', 'bigint')
    .execute();
  // A lead's attempts with their results (export, forget).
  await db.schema.createIndex('call_results_lead').on('call_results').columns(['lead_id', 'attempt_id']).execute();
  // The campaign's extracted variable names (export's first pass).
  await db.schema.createIndex('call_results_campaign').on('call_results').columns(['campaign_id', 'attempt_id']).execute();
  // The retention sweep: the oldest results whose personal data is still kept.
  await db.schema.createIndex('call_results_received').on('call_results').columns(['erased_at', 'received_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('call_results').ifExists().execute();
}

import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// PostgreSQL only. `leads import` writes two batches at once on two connections (issue 12),
// and each batch's statement trigger (0002) adds to the same counter rows of its campaign:
// (campaign, 'invalid'), (campaign, 'pending'), (campaign, 'suppressed'). Added in whatever
// order the grouping gave, two batches could lock them in opposite orders and deadlock;
// in the key's order they queue behind each other instead. SQLite's row triggers are
// untouched: it has one writer.

const body = (order: string): string => `CREATE OR REPLACE FUNCTION leads_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO lead_counts (campaign_id, state, n) SELECT campaign_id, state, count(*) FROM new_rows GROUP BY campaign_id, state ${order}
    ON CONFLICT (campaign_id, state) DO UPDATE SET n = lead_counts.n + excluded.n;
  RETURN NULL; END $$`;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql.raw(body('ORDER BY campaign_id, state')).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql.raw(body('')).execute(db);
}

import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// PostgreSQL only. The status counters (0002, 0010) kept ONE row per (campaign, state), and
// every statement that adds, removes or moves a lead updates its campaign's rows from its
// trigger, so the row stays locked until that transaction commits. Every writer of one
// campaign therefore queued behind the others: two `POST /campaigns/{name}/leads` on two of
// the API's connections, a POST and the engine's claim, two `leads import` batches. Under
// 100 single-lead POSTs a second the API's answers waited ~1 s in that queue while the
// daemon's CPU was half idle (bench/api.ts --dialect postgres; pg_stat_activity showed the
// COPY of leads waiting on the previous POST's transaction).
//
// Now each connection counts into a row of its own: the key gains `slot`, the backend's pid
// modulo 8, and a state's count is the sum of its slots (src/store/counts.ts adds them up).
// A slot row may go below zero (a lead counted in by one connection and moved out by
// another); the sum cannot. Within a transaction the rows are written by ONE upsert in key
// order, the moves' subtractions and additions together, so two transactions that share a
// slot queue behind each other and can no longer deadlock (a claim, pending → calling, and a
// withdrawal, calling → pending, took the same two rows in opposite orders before).
// SQLite: one writer, row triggers, nothing to change.

const SLOTS = 8;
const SLOT = `(pg_backend_pid() % ${SLOTS})::smallint`;
const MOVED = 'o.campaign_id IS DISTINCT FROM n.campaign_id OR o.state IS DISTINCT FROM n.state';

/** One upsert of signed deltas (campaign_id, state, d) into this connection's slot, in key order. */
const upsert = (deltas: string) => `INSERT INTO lead_counts (campaign_id, state, slot, n)
    SELECT campaign_id, state, ${SLOT}, sum(d) FROM (${deltas}) x GROUP BY campaign_id, state HAVING sum(d) <> 0 ORDER BY campaign_id, state
    ON CONFLICT (campaign_id, state, slot) DO UPDATE SET n = lead_counts.n + excluded.n;`;

const SLOTTED = {
  insert: upsert('SELECT campaign_id, state, 1 AS d FROM new_rows'),
  // A campaign's deletion removes its counter rows itself (0002's campaigns_counts_delete),
  // before the statement trigger of the cascaded delete of its leads runs: that trigger must
  // not write them back, at minus the leads.
  delete: upsert('SELECT campaign_id, state, -1 AS d FROM old_rows o WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.id = o.campaign_id)'),
  // Each moved lead once: out of its old (campaign, state), into its new one.
  update: upsert(
    `SELECT v.campaign_id, v.state, v.d FROM old_rows o JOIN new_rows n ON n.id = o.id
       CROSS JOIN LATERAL (VALUES (o.campaign_id, o.state, -1), (n.campaign_id, n.state, 1)) v (campaign_id, state, d)
     WHERE ${MOVED}`,
  ),
};

/** The bodies of before (0002, with 0010's ordered insert), for down(). */
const UNSLOTTED = {
  insert: `INSERT INTO lead_counts (campaign_id, state, n) SELECT campaign_id, state, count(*) FROM new_rows GROUP BY campaign_id, state ORDER BY campaign_id, state
    ON CONFLICT (campaign_id, state) DO UPDATE SET n = lead_counts.n + excluded.n;`,
  delete: `UPDATE lead_counts SET n = lead_counts.n - d.k FROM (SELECT campaign_id, state, count(*) AS k FROM old_rows GROUP BY campaign_id, state) d
    WHERE lead_counts.campaign_id = d.campaign_id AND lead_counts.state = d.state;`,
  update: `UPDATE lead_counts SET n = lead_counts.n - d.k FROM (SELECT campaign_id, state, count(*) AS k FROM (SELECT o.campaign_id, o.state FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${MOVED}) m GROUP BY campaign_id, state) d
    WHERE lead_counts.campaign_id = d.campaign_id AND lead_counts.state = d.state;
    INSERT INTO lead_counts (campaign_id, state, n) SELECT campaign_id, state, count(*) FROM (SELECT n.campaign_id, n.state FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${MOVED}) m GROUP BY campaign_id, state
    ON CONFLICT (campaign_id, state) DO UPDATE SET n = lead_counts.n + excluded.n;`,
};

async function replaceFunctions(db: Kysely<any>, bodies: Record<'insert' | 'delete' | 'update', string>): Promise<void> {
  for (const [event, body] of Object.entries(bodies)) {
    await sql.raw(`CREATE OR REPLACE FUNCTION leads_count_${event}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw(`ALTER TABLE lead_counts ADD COLUMN slot smallint NOT NULL DEFAULT 0`).execute(db);
  await sql.raw(`ALTER TABLE lead_counts DROP CONSTRAINT lead_counts_pk, ADD CONSTRAINT lead_counts_pk PRIMARY KEY (campaign_id, state, slot)`).execute(db);
  await replaceFunctions(db, SLOTTED);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  // Each state's slots folded into one row again.
  await sql.raw(`CREATE TEMPORARY TABLE lead_count_sums AS SELECT campaign_id, state, sum(n)::bigint AS n FROM lead_counts GROUP BY campaign_id, state`).execute(db);
  await sql.raw(`DELETE FROM lead_counts`).execute(db);
  await sql.raw(`ALTER TABLE lead_counts DROP CONSTRAINT lead_counts_pk, DROP COLUMN slot, ADD CONSTRAINT lead_counts_pk PRIMARY KEY (campaign_id, state)`).execute(db);
  await sql.raw(`INSERT INTO lead_counts (campaign_id, state, n) SELECT campaign_id, state, n FROM lead_count_sums`).execute(db);
  await sql.raw(`DROP TABLE lead_count_sums`).execute(db);
  await replaceFunctions(db, UNSLOTTED);
}

import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// The lead state `cancelled` (a lead stopped by the caller: the API's DELETE, or a
// pre-dial check that refused it) is final. The status counters (0002) count any state,
// but the `lead.final` hook triggers of 0007 name the final states: they are made again
// here with `cancelled` among them, each with the body it had (only the state list moves).
// `predial_counts` keeps each campaign's pre-dial checks and failures for `status`.

const BEFORE = `('completed', 'reached-max-retries', 'invalid', 'suppressed')`;
const AFTER = `('completed', 'reached-max-retries', 'invalid', 'suppressed', 'cancelled')`;
const LEAD_FINAL_TRIGGERS = [
  { name: 'hooks_lead_final', on: 'UPDATE OF state ON leads', when: (f: string) => `NEW.state IN ${f} AND OLD.state NOT IN ${f}` },
  { name: 'hooks_lead_final_insert', on: 'INSERT ON leads', when: (f: string) => `NEW.state IN ${f}` },
];

export async function up(db: Kysely<any>): Promise<void> {
  await replaceFinalList(db, BEFORE, AFTER);
  await db.schema
    .createTable('predial_counts')
    .addColumn('campaign_id', 'bigint', (c) => c.primaryKey())
    .addColumn('checks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failures', 'bigint', (c) => c.notNull().defaultTo(0))
    // epoch ms, by the daemon's clock; null before the first failure
    .addColumn('last_failure_at', 'bigint')
    .addColumn('last_failure_detail', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('predial_counts').ifExists().execute();
  await replaceFinalList(db, AFTER, BEFORE);
}

async function replaceFinalList(db: Kysely<any>, from: string, to: string): Promise<void> {
  for (const t of LEAD_FINAL_TRIGGERS) {
    if (isPostgres(db)) {
      // The state list is in the trigger's WHEN; its function (the body) stays as it is.
      await sql.raw(`DROP TRIGGER IF EXISTS ${t.name} ON leads`).execute(db);
      await sql.raw(`CREATE TRIGGER ${t.name} AFTER ${t.on} FOR EACH ROW WHEN (${t.when(to)}) EXECUTE FUNCTION ${t.name}()`).execute(db);
      continue;
    }
    // SQLite keeps a trigger's text: the same text with the new list, so the body is unchanged.
    const row = await sql<{ sql: string }>`select sql from sqlite_master where type = 'trigger' and name = ${t.name}`.execute(db);
    const text = row.rows[0]?.sql;
    if (text === undefined || !text.includes(t.when(from))) throw new Error(`migration 0016: trigger ${t.name} is not the one 0007 made`);
    await sql.raw(`DROP TRIGGER ${t.name}`).execute(db);
    await sql.raw(text.replace(t.when(from), t.when(to))).execute(db);
  }
}

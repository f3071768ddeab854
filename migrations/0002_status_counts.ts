import { type Kysely, sql } from 'kysely';
import { integer, isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// `campaignd status` showed per campaign seven count(*) over leads and a count(*) over
// attempts: its cost grew with the number of leads (~0.6 s at 1M leads in 100
// campaigns). The database now keeps those counts itself, in two small tables kept
// right by triggers, so that every path that writes leads or attempts (import,
// engine transitions, suppression, recovery, an operator's SQL, cascades of a
// campaign's deletion) keeps them right without knowing they exist.
//
// The counter tables and the backfill are portable kysely. The triggers differ: SQLite's
// are row triggers; PostgreSQL's (createPostgresTriggers below) are statement triggers
// over transition tables, one grouped upsert per statement, so a 1,000-row insert of an
// import moves each counter once rather than 1,000 times. With several daemons on one
// PostgreSQL database each counter row would serialize the transactions that touch it
// until they commit; if that ever shows, append delta rows and sum them instead.

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  // No foreign keys to campaigns: a counter must never make a write fail (a lead left
  // behind by a campaign deleted with foreign keys off still updates its counter). A
  // trigger on campaigns removes a deleted campaign's counters instead.
  await db.schema
    .createTable('lead_counts')
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('n', int, (c) => c.notNull())
    .addPrimaryKeyConstraint('lead_counts_pk', ['campaign_id', 'state'])
    .execute();
  await db.schema
    .createTable('attempt_counts')
    .addColumn('campaign_id', int, (c) => c.primaryKey())
    .addColumn('n', int, (c) => c.notNull())
    .execute();

  // "Leads finished in the last hour" (the status pace): a range of this partial index
  // instead of a join over every attempt of the last three hours. Only final leads are
  // in it, so the engine's hot transitions (pending → calling → retry) never touch it.
  // The state list is written as literals: queries must repeat them for SQLite to use it.
  await db.schema
    .createIndex('leads_finished')
    .on('leads')
    .columns(['campaign_id', 'updated_at'])
    .where(sql.ref('state'), 'in', ['completed', 'reached-max-retries'])
    .execute();

  if (isPostgres(db)) await createPostgresTriggers(db);
  else await createSqliteTriggers(db);

  // Backfill inside the same transaction: the migrator's first statement took the write
  // lock, so no write slips between these counts and the triggers taking over. Rows of
  // a campaign that no longer exists are left out, as status never shows them.
  const liveCampaigns = db.selectFrom('campaigns').select('id');
  await db
    .insertInto('lead_counts')
    .columns(['campaign_id', 'state', 'n'])
    .expression(
      db
        .selectFrom('leads')
        .select(['campaign_id', 'state', (eb) => eb.fn.countAll().as('n')])
        .where('campaign_id', 'in', liveCampaigns)
        .groupBy(['campaign_id', 'state']),
    )
    .execute();
  await db
    .insertInto('attempt_counts')
    .columns(['campaign_id', 'n'])
    .expression(
      db
        .selectFrom('attempts')
        .select(['campaign_id', (eb) => eb.fn.countAll().as('n')])
        .where('campaign_id', 'in', liveCampaigns)
        .groupBy('campaign_id'),
    )
    .execute();
}

async function createSqliteTriggers(db: Kysely<any>): Promise<void> {
  // A counter row is created by its first lead or attempt (upsert) and only decremented
  // by an UPDATE, so a delete never creates a row. `n` may reach 0 and stay.
  await sql`
    CREATE TRIGGER leads_count_insert AFTER INSERT ON leads
    BEGIN
      INSERT INTO lead_counts (campaign_id, state, n) VALUES (NEW.campaign_id, NEW.state, 1)
        ON CONFLICT (campaign_id, state) DO UPDATE SET n = n + 1;
    END`.execute(db);
  await sql`
    CREATE TRIGGER leads_count_delete AFTER DELETE ON leads
    BEGIN
      UPDATE lead_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id AND state = OLD.state;
    END`.execute(db);
  // UPDATE OF fires whenever the column is SET, even to the same value (every engine
  // transition sets state); WHEN skips the counters when nothing moved.
  await sql`
    CREATE TRIGGER leads_count_update AFTER UPDATE OF state, campaign_id ON leads
    WHEN OLD.state IS NOT NEW.state OR OLD.campaign_id IS NOT NEW.campaign_id
    BEGIN
      UPDATE lead_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id AND state = OLD.state;
      INSERT INTO lead_counts (campaign_id, state, n) VALUES (NEW.campaign_id, NEW.state, 1)
        ON CONFLICT (campaign_id, state) DO UPDATE SET n = n + 1;
    END`.execute(db);
  await sql`
    CREATE TRIGGER attempts_count_insert AFTER INSERT ON attempts
    BEGIN
      INSERT INTO attempt_counts (campaign_id, n) VALUES (NEW.campaign_id, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET n = n + 1;
    END`.execute(db);
  await sql`
    CREATE TRIGGER attempts_count_delete AFTER DELETE ON attempts
    BEGIN
      UPDATE attempt_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id;
    END`.execute(db);
  await sql`
    CREATE TRIGGER attempts_count_update AFTER UPDATE OF campaign_id ON attempts
    WHEN OLD.campaign_id IS NOT NEW.campaign_id
    BEGIN
      UPDATE attempt_counts SET n = n - 1 WHERE campaign_id = OLD.campaign_id;
      INSERT INTO attempt_counts (campaign_id, n) VALUES (NEW.campaign_id, 1)
        ON CONFLICT (campaign_id) DO UPDATE SET n = n + 1;
    END`.execute(db);
  // Whether the cascaded deletes of its leads and attempts run before or after this,
  // the campaign ends with no counter rows: their decrements of a removed row are no-ops.
  await sql`
    CREATE TRIGGER campaigns_counts_delete AFTER DELETE ON campaigns
    BEGIN
      DELETE FROM lead_counts WHERE campaign_id = OLD.id;
      DELETE FROM attempt_counts WHERE campaign_id = OLD.id;
    END`.execute(db);
}

/**
 * The same counters on PostgreSQL. A statement trigger with transition tables may name
 * one event and no column list, so an UPDATE trigger sees every update of leads and
 * counts only the rows whose state or campaign moved. Cascaded deletes run as statements
 * too, so they fire these as well.
 */
async function createPostgresTriggers(db: Kysely<any>): Promise<void> {
  const counters = [
    { table: 'leads', counts: 'lead_counts', key: ['campaign_id', 'state'] },
    { table: 'attempts', counts: 'attempt_counts', key: ['campaign_id'] },
  ];
  for (const { table, counts, key } of counters) {
    const cols = key.join(', ');
    const moved = key.map((k) => `o.${k} IS DISTINCT FROM n.${k}`).join(' OR ');
    const match = (alias: string) => key.map((k) => `${counts}.${k} = ${alias}.${k}`).join(' AND ');
    const add = (rows: string) =>
      `INSERT INTO ${counts} (${cols}, n) SELECT ${cols}, count(*) FROM ${rows} GROUP BY ${cols}
         ON CONFLICT (${cols}) DO UPDATE SET n = ${counts}.n + excluded.n;`;
    const subtract = (rows: string) =>
      `UPDATE ${counts} SET n = ${counts}.n - d.k FROM (SELECT ${cols}, count(*) AS k FROM ${rows} GROUP BY ${cols}) d WHERE ${match('d')};`;
    const movedRows = (side: 'o' | 'n') => `(SELECT ${key.map((k) => `${side}.${k}`).join(', ')} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${moved}) m`;
    const functions = {
      insert: add('new_rows'),
      delete: subtract('old_rows'),
      update: `${subtract(movedRows('o'))}\n${add(movedRows('n'))}`,
    };
    for (const [event, body] of Object.entries(functions)) {
      const name = `${table}_count_${event}`;
      const tables = event === 'insert' ? 'NEW TABLE AS new_rows' : event === 'delete' ? 'OLD TABLE AS old_rows' : 'OLD TABLE AS old_rows NEW TABLE AS new_rows';
      await sql.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${event.toUpperCase()} ON ${table} REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`).execute(db);
    }
  }
  await sql
    .raw(
      `CREATE FUNCTION campaigns_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         DELETE FROM lead_counts WHERE campaign_id = OLD.id;
         DELETE FROM attempt_counts WHERE campaign_id = OLD.id;
         RETURN NULL;
       END $$`,
    )
    .execute(db);
  await sql.raw(`CREATE TRIGGER campaigns_counts_delete AFTER DELETE ON campaigns FOR EACH ROW EXECUTE FUNCTION campaigns_counts_delete()`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const fn of ['campaigns_counts_delete', 'attempts_count_update', 'attempts_count_delete', 'attempts_count_insert', 'leads_count_update', 'leads_count_delete', 'leads_count_insert']) {
      await sql.raw(`DROP FUNCTION IF EXISTS ${fn}() CASCADE`).execute(db);
    }
  }
  else {
    for (const trigger of ['campaigns_counts_delete', 'attempts_count_update', 'attempts_count_delete', 'attempts_count_insert', 'leads_count_update', 'leads_count_delete', 'leads_count_insert']) {
      await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)}`.execute(db);
    }
  }
  await db.schema.dropIndex('leads_finished').ifExists().execute();
  await db.schema.dropTable('attempt_counts').ifExists().execute();
  await db.schema.dropTable('lead_counts').ifExists().execute();
}

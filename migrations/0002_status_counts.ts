import { type Kysely, sql } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// `campaignd status` showed per campaign seven count(*) over leads and a count(*) over
// attempts: its cost grew with the number of leads (~0.6 s at 1M leads in 100
// campaigns). The database now keeps those counts itself, in two small tables kept
// right by triggers, so that every path that writes leads or attempts (import,
// engine transitions, suppression, recovery, an operator's SQL, cascades of a
// campaign's deletion) keeps them right without knowing they exist.
//
// The counter tables and the backfill are portable kysely. The triggers are SQLite:
// a PostgreSQL migration would create one PL/pgSQL function per table doing the same
// INSERT … ON CONFLICT / UPDATE with OLD and NEW, and `CREATE TRIGGER … AFTER INSERT
// OR UPDATE OF state, campaign_id OR DELETE ON leads FOR EACH ROW EXECUTE FUNCTION …`
// (PostgreSQL fires row triggers on cascaded deletes too). With several daemons on one
// PostgreSQL database each counter row would serialize the transactions that touch it
// until they commit; if that ever shows, append delta rows and sum them instead.

export async function up(db: Kysely<any>): Promise<void> {
  // No foreign keys to campaigns: a counter must never make a write fail (a lead left
  // behind by a campaign deleted with foreign keys off still updates its counter). A
  // trigger on campaigns removes a deleted campaign's counters instead.
  await db.schema
    .createTable('lead_counts')
    .addColumn('campaign_id', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('lead_counts_pk', ['campaign_id', 'state'])
    .execute();
  await db.schema
    .createTable('attempt_counts')
    .addColumn('campaign_id', 'integer', (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
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

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['campaigns_counts_delete', 'attempts_count_update', 'attempts_count_delete', 'attempts_count_insert', 'leads_count_update', 'leads_count_delete', 'leads_count_insert']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)}`.execute(db);
  }
  await db.schema.dropIndex('leads_finished').ifExists().execute();
  await db.schema.dropTable('attempt_counts').ifExists().execute();
  await db.schema.dropTable('lead_counts').ifExists().execute();
}

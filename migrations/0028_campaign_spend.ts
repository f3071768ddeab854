import { sql, type Kysely } from 'kysely';
import { integer, isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// A campaign's spending (README, "Budgets") is read on every dial pass. It was three
// aggregates over the campaign's call results, so each pass grew with the calls made: a
// campaign of 500,000 priced calls summed 500,000 rows before each pass. The database now
// keeps the sums itself, kept right by triggers on call_results, like the status counters
// (0002), so every path that prices a call keeps them without knowing they exist:
//  - bucket -1: the campaign's whole spending, the number of priced calls, the dearest;
//  - bucket B ≥ 0: the calls whose attempt was created in the quarter hour starting at B
//    (epoch ms). A budget day starts at a local midnight, and every zone's offset is a
//    whole number of quarter hours, so "today" is a sum of at most ~100 buckets.
// A cost is set once (call_results keeps the first known value), so a row counts when its
// cost goes from null to a value. On PostgreSQL these are row triggers: they fire once per
// priced call, and the engine prices a campaign's calls on one connection.

/** The bucket width: a quarter hour, in ms. */
const BUCKET_MS = 900_000;

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  await db.schema
    .createTable('campaign_spend')
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('bucket', int, (c) => c.notNull())
    .addColumn('spent', 'double precision', (c) => c.notNull())
    .addColumn('costed', int, (c) => c.notNull())
    .addColumn('largest', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('campaign_spend_pk', ['campaign_id', 'bucket'])
    .execute();
  // The calls still to be priced (budget.ts counts them at the mean): few at any time.
  await db.schema.createIndex('call_results_unpriced').on('call_results').columns(['campaign_id', 'attempt_id']).where(sql.ref('cost'), 'is', null).execute();

  if (isPostgres(db)) await createPostgresTriggers(db);
  else await createSqliteTriggers(db);

  // Backfill in the migration's transaction, which holds the write lock: no cost is set
  // between the sums and the triggers taking over.
  await sql`
    INSERT INTO campaign_spend (campaign_id, bucket, spent, costed, largest)
    SELECT campaign_id, -1, sum(cost), count(cost), max(cost) FROM call_results WHERE cost IS NOT NULL GROUP BY campaign_id`.execute(db);
  await sql`
    INSERT INTO campaign_spend (campaign_id, bucket, spent, costed, largest)
    SELECT r.campaign_id, (a.created_at / ${sql.lit(BUCKET_MS)}) * ${sql.lit(BUCKET_MS)} AS b, sum(r.cost), count(r.cost), max(r.cost)
    FROM call_results r JOIN attempts a ON a.id = r.attempt_id
    WHERE r.cost IS NOT NULL GROUP BY r.campaign_id, b`.execute(db);
}

/** The two upserts of one priced call, as `campaign`, `attempt` and `cost` name them in the trigger. */
function addCall(campaign: string, attempt: string, cost: string): string {
  const upsert = (bucket: string) => `INSERT INTO campaign_spend (campaign_id, bucket, spent, costed, largest) VALUES (${campaign}, ${bucket}, ${cost}, 1, ${cost})
      ON CONFLICT (campaign_id, bucket) DO UPDATE SET spent = campaign_spend.spent + excluded.spent, costed = campaign_spend.costed + 1,
        largest = CASE WHEN excluded.largest > campaign_spend.largest THEN excluded.largest ELSE campaign_spend.largest END;`;
  // The total first, then the bucket: every transaction takes a campaign's rows in one order.
  return `${upsert('-1')}
    ${upsert(`(SELECT (created_at / ${BUCKET_MS}) * ${BUCKET_MS} FROM attempts WHERE id = ${attempt})`)}`;
}

async function createSqliteTriggers(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `CREATE TRIGGER call_results_spend_insert AFTER INSERT ON call_results WHEN NEW.cost IS NOT NULL
    BEGIN
      ${addCall('NEW.campaign_id', 'NEW.attempt_id', 'NEW.cost')}
    END`,
    )
    .execute(db);
  // UPDATE OF fires whenever the upsert SETs cost (every merge does); WHEN keeps the first pricing only.
  await sql
    .raw(
      `CREATE TRIGGER call_results_spend_update AFTER UPDATE OF cost ON call_results WHEN OLD.cost IS NULL AND NEW.cost IS NOT NULL
    BEGIN
      ${addCall('NEW.campaign_id', 'NEW.attempt_id', 'NEW.cost')}
    END`,
    )
    .execute(db);
  await sql`CREATE TRIGGER campaigns_spend_delete AFTER DELETE ON campaigns BEGIN DELETE FROM campaign_spend WHERE campaign_id = OLD.id; END`.execute(db);
}

async function createPostgresTriggers(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `CREATE FUNCTION call_results_spend() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      ${addCall('NEW.campaign_id', 'NEW.attempt_id', 'NEW.cost')}
      RETURN NULL; END $$`,
    )
    .execute(db);
  await sql`CREATE TRIGGER call_results_spend_insert AFTER INSERT ON call_results FOR EACH ROW WHEN (NEW.cost IS NOT NULL) EXECUTE FUNCTION call_results_spend()`.execute(db);
  await sql`CREATE TRIGGER call_results_spend_update AFTER UPDATE OF cost ON call_results FOR EACH ROW WHEN (OLD.cost IS NULL AND NEW.cost IS NOT NULL) EXECUTE FUNCTION call_results_spend()`.execute(db);
  await sql`CREATE FUNCTION campaigns_spend_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM campaign_spend WHERE campaign_id = OLD.id; RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER campaigns_spend_delete AFTER DELETE ON campaigns FOR EACH ROW EXECUTE FUNCTION campaigns_spend_delete()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`DROP TRIGGER IF EXISTS call_results_spend_insert ON call_results`.execute(db);
    await sql`DROP TRIGGER IF EXISTS call_results_spend_update ON call_results`.execute(db);
    await sql`DROP TRIGGER IF EXISTS campaigns_spend_delete ON campaigns`.execute(db);
    await sql`DROP FUNCTION IF EXISTS call_results_spend()`.execute(db);
    await sql`DROP FUNCTION IF EXISTS campaigns_spend_delete()`.execute(db);
  } else {
    await sql`DROP TRIGGER IF EXISTS call_results_spend_insert`.execute(db);
    await sql`DROP TRIGGER IF EXISTS call_results_spend_update`.execute(db);
    await sql`DROP TRIGGER IF EXISTS campaigns_spend_delete`.execute(db);
  }
  await db.schema.dropIndex('call_results_unpriced').execute();
  await db.schema.dropTable('campaign_spend').execute();
}

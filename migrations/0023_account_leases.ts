import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Several active instances on one PostgreSQL database, each account dialed by exactly one
// of them at a time (docs/several-instances.md). `account_leases` holds one lease per
// account: its holder (null once released), a fencing token `fence` raised by one at every
// taking, and its expiry in epoch ms. `lease_instances` says which instances take part in
// sharing the accounts right now (each renews its row with its leases), which is what the
// balancer spreads the accounts over. `attempts.fence_account` names the account whose
// lease a claim was made under (with `fence_token` its fence).
//
// On PostgreSQL the fencing trigger of 0008 is replaced by one that also knows accounts: a
// claim carrying `fence_account` is refused unless that account's lease is unexpired and its
// fence is the claim's; the lease row is locked FOR SHARE until the claim commits, so a
// takeover (which updates that row) cannot slip in between the check and the commit. A
// claim without `fence_account` is judged as before against the one lease of `ha_lease`.
//
// SQLite gets the tables and the column but no trigger: one daemon per file holds every
// account there.

/** SQLSTATE of a fenced claim; the same as 0008's (src/store/fencing.ts matches it). */
const FENCED_SQLSTATE = 'CDL01';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('account_leases')
    .addColumn('account', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('fence', 'bigint', (c) => c.notNull())
    // epoch ms, by the clock the instances judge leases with (the database's in production)
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // when the current holder took it (epoch ms): for status and for the balancer's reports
    .addColumn('taken_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('lease_instances')
    .addColumn('instance_id', 'text', (c) => c.primaryKey())
    .addColumn('joined_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('attempts').addColumn('fence_account', 'text').execute();
  if (!isPostgres(db)) return;
  await sql`
    CREATE OR REPLACE FUNCTION campaignd_fence_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      current_token bigint;
      current_expiry bigint;
    BEGIN
      IF NEW.fence_account IS NOT NULL THEN
        SELECT fence, expires_at INTO current_token, current_expiry FROM account_leases
          WHERE account = NEW.fence_account AND holder IS NOT NULL FOR SHARE;
        IF NOT FOUND OR NEW.fence_token IS DISTINCT FROM current_token
           OR current_expiry <= (extract(epoch from clock_timestamp()) * 1000)::bigint THEN
          RAISE EXCEPTION 'campaignd: claim refused: the lease of account % it was made under (fence %) is no longer current', NEW.fence_account, NEW.fence_token
            USING ERRCODE = ${sql.lit(FENCED_SQLSTATE)}, DETAIL = NEW.fence_account;
        END IF;
        RETURN NEW;
      END IF;
      SELECT token, expires_at INTO current_token, current_expiry FROM ha_lease WHERE id = 1 FOR SHARE;
      IF NOT FOUND AND NEW.fence_token IS NULL THEN
        RETURN NEW;
      END IF;
      IF NEW.fence_token IS DISTINCT FROM current_token
         OR current_expiry <= (extract(epoch from clock_timestamp()) * 1000)::bigint THEN
        RAISE EXCEPTION 'campaignd: claim refused: the lease it was made under (token %) is no longer current', NEW.fence_token
          USING ERRCODE = ${sql.lit(FENCED_SQLSTATE)};
      END IF;
      RETURN NEW;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    // 0008's function, as it was.
    await sql`
      CREATE OR REPLACE FUNCTION campaignd_fence_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        current_token bigint;
        current_expiry bigint;
      BEGIN
        SELECT token, expires_at INTO current_token, current_expiry FROM ha_lease WHERE id = 1 FOR SHARE;
        IF NOT FOUND AND NEW.fence_token IS NULL THEN
          RETURN NEW;
        END IF;
        IF NEW.fence_token IS DISTINCT FROM current_token
           OR current_expiry <= (extract(epoch from clock_timestamp()) * 1000)::bigint THEN
          RAISE EXCEPTION 'campaignd: claim refused: the lease it was made under (token %) is no longer current', NEW.fence_token
            USING ERRCODE = ${sql.lit(FENCED_SQLSTATE)};
        END IF;
        RETURN NEW;
      END $$`.execute(db);
  }
  await db.schema.alterTable('attempts').dropColumn('fence_account').execute();
  await db.schema.dropTable('lease_instances').execute();
  await db.schema.dropTable('account_leases').execute();
}

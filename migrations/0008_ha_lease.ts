import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Active and standby on one PostgreSQL database (docs/design.md §10). `ha_lease` holds the one
// lease (src/store/lease.ts); `attempts.fence_token` is the token of the lease a claim was
// made under. On PostgreSQL the database itself refuses an intent written under a token
// that is no longer current, or under a lease that ran out: an instance frozen past its
// lease (SIGSTOP, a paused VM) and woken up cannot commit a claim, whatever it believes.
// The check locks the lease row FOR SHARE until the claim commits, so a takeover (which
// updates that row) cannot slip in between the check and the commit.
//
// Before any instance took the lease (a store used without `campaignd run`, a test of the
// engine alone) there is nothing to fence against and an intent without a token passes.
// SQLite gets the table and the column but no check: one daemon per file (daemon-row.ts).
//
// A slot freed by a webhook that a standby recorded must be refilled by the active instance
// as fast as one it recorded itself: on PostgreSQL an attempt leaving the live states
// notifies channel `campaignd_slot` (delivered at commit, once per transaction), which the
// active instance listens to (src/store/pg-wakeups.ts).

/** SQLSTATE of a fenced claim ("CD": campaignd's own class). src/store/fencing.ts matches it. */
export const FENCED_SQLSTATE = 'CDL01';

/** The channel an attempt leaving the live states is announced on. */
export const SLOT_CHANNEL = 'campaignd_slot';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('ha_lease')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('token', 'bigint', (c) => c.notNull())
    // epoch ms by the database's clock
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('attempts').addColumn('fence_token', 'bigint').execute();
  if (!isPostgres(db)) return;
  await sql`
    CREATE FUNCTION campaignd_fence_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
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
  await sql`
    CREATE TRIGGER attempts_fence BEFORE INSERT ON attempts
    FOR EACH ROW EXECUTE FUNCTION campaignd_fence_attempt()`.execute(db);
  await sql`
    CREATE FUNCTION campaignd_notify_slot() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${sql.lit(SLOT_CHANNEL)}, '');
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER attempts_slot_freed AFTER UPDATE OF state ON attempts
    FOR EACH ROW WHEN (OLD.state IN ('dialing', 'placed', 'unknown') AND NEW.state NOT IN ('dialing', 'placed', 'unknown'))
    EXECUTE FUNCTION campaignd_notify_slot()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`DROP TRIGGER IF EXISTS attempts_slot_freed ON attempts`.execute(db);
    await sql`DROP FUNCTION IF EXISTS campaignd_notify_slot()`.execute(db);
    await sql`DROP TRIGGER IF EXISTS attempts_fence ON attempts`.execute(db);
    await sql`DROP FUNCTION IF EXISTS campaignd_fence_attempt()`.execute(db);
  }
  await db.schema.alterTable('attempts').dropColumn('fence_token').execute();
  await db.schema.dropTable('ha_lease').execute();
}

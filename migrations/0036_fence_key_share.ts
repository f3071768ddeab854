import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// PostgreSQL only. A claim's fencing check (0008, 0023) locks the lease row it was made under
// until the claim commits, so that a takeover, which raises the row's fence or token, waits for
// it. It locked the row FOR SHARE, which also made every RENEWAL of that lease (an UPDATE of
// its expiry) wait for every claim transaction in flight: with several active instances, the
// renewal of an instance's leases (one statement) waited behind its claims' transactions, and
// leases ran out under their holders (3 instances, 200 accounts: hundreds of accounts lost and
// taken again in two minutes). Now the check locks FOR KEY SHARE, which only an UPDATE of a
// key column waits for: the fence (the token) is made part of a unique key, so a takeover,
// which raises it, still waits for the claims in flight, while a renewal or a release, which
// change neither, no longer does. SQLite: one writer, no trigger, nothing to change.

const FENCED_SQLSTATE = 'CDL01';

function fenceFunction(lock: 'FOR SHARE' | 'FOR KEY SHARE') {
  return sql`
    CREATE OR REPLACE FUNCTION campaignd_fence_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      current_token bigint;
      current_expiry bigint;
    BEGIN
      IF NEW.fence_account IS NOT NULL THEN
        SELECT fence, expires_at INTO current_token, current_expiry FROM account_leases
          WHERE account = NEW.fence_account AND holder IS NOT NULL ${sql.raw(lock)};
        IF NOT FOUND OR NEW.fence_token IS DISTINCT FROM current_token
           OR current_expiry <= (extract(epoch from clock_timestamp()) * 1000)::bigint THEN
          RAISE EXCEPTION 'campaignd: claim refused: the lease of account % it was made under (fence %) is no longer current', NEW.fence_account, NEW.fence_token
            USING ERRCODE = ${sql.lit(FENCED_SQLSTATE)}, DETAIL = NEW.fence_account;
        END IF;
        RETURN NEW;
      END IF;
      SELECT token, expires_at INTO current_token, current_expiry FROM ha_lease WHERE id = 1 ${sql.raw(lock)};
      IF NOT FOUND AND NEW.fence_token IS NULL THEN
        RETURN NEW;
      END IF;
      IF NEW.fence_token IS DISTINCT FROM current_token
         OR current_expiry <= (extract(epoch from clock_timestamp()) * 1000)::bigint THEN
        RAISE EXCEPTION 'campaignd: claim refused: the lease it was made under (token %) is no longer current', NEW.fence_token
          USING ERRCODE = ${sql.lit(FENCED_SQLSTATE)};
      END IF;
      RETURN NEW;
    END $$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  // Key columns: an UPDATE of the fence or the token takes the row FOR UPDATE, which FOR KEY SHARE blocks.
  await sql`CREATE UNIQUE INDEX account_leases_fence ON account_leases (account, fence)`.execute(db);
  await sql`CREATE UNIQUE INDEX ha_lease_token ON ha_lease (id, token)`.execute(db);
  await fenceFunction('FOR KEY SHARE').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await fenceFunction('FOR SHARE').execute(db);
  await sql`DROP INDEX IF EXISTS ha_lease_token`.execute(db);
  await sql`DROP INDEX IF EXISTS account_leases_fence`.execute(db);
}

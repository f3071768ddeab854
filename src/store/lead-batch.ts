import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { DEADLOCK_DETECTED, LOCK_NOT_AVAILABLE, sqlState } from './pg-errors.js';
import type { StagedLead } from './lead-copy.js';
import { insertNewLeads, leadInserts, type LeadInserts } from './lead-insert.js';
import type { Database } from './types.js';

// How one batch of a lead import reaches the store: one transaction per batch, its new
// leads by COPY on PostgreSQL (lead-copy.ts, on a connection of the store's pool taken for
// that transaction only: the daemon's engine shares that pool of one) and by multi-row
// INSERT on SQLite (lead-insert.ts). The import (src/leads/import.ts) decides what each row
// becomes and runs its reads and updates in the batch's transaction; it never sees which.

/** Rows per transaction when the caller does not say: PostgreSQL pays round trips per batch (10,000 went no faster and took the command to 272 MB). */
export function defaultImportBatchRows(db: Kysely<Database>): number {
  return isPostgres(db) ? 5_000 : 2000;
}

/** A batch's turn to take lead ids, so that batches written side by side keep the file's order (src/leads/write-window.ts hands them out). */
export interface IdTurn {
  previous: Promise<void>;
  done(): void;
}

/** Writes the new leads of the batch, in its transaction; returns their ids in the leads' order. */
export type InsertLeads = (leads: readonly StagedLead[]) => Promise<number[]>;

export interface LeadBatchWriter {
  /**
   * Runs `fn` in one transaction and returns what it returns. On PostgreSQL a batch that
   * lost a lock conflict is rolled back whole by the server and run again: `fn` must count
   * what it finds apart and return it, so that the caller adds it once, after the commit.
   */
  run<T>(idTurn: IdTurn, fn: (trx: Kysely<Database>, insert: InsertLeads) => Promise<T>): Promise<T>;
}

/**
 * The writer of one import into one campaign. `readOnly` (a dry run): plain transactions on
 * `db`, whose `insert` must not be called.
 */
export function leadBatchWriter(db: Kysely<Database>, fields: { campaignId: number; sourceFile: string; now: number; readOnly?: boolean }): LeadBatchWriter {
  const inserts = leadInserts();
  const { campaignId, sourceFile, now } = fields;
  const viaInsert = async <T>(fn: (trx: Kysely<Database>, insert: InsertLeads) => Promise<T>): Promise<T> =>
    db.transaction().execute((trx) =>
      fn(trx, async (leads) => {
        if (fields.readOnly) throw new Error('lead import: a dry run writes no lead');
        return insertNewLeads(trx, inserts, leads, { campaignId, sourceFile, now });
      }),
    );
  return {
    async run(idTurn, fn) {
      try {
        // Loaded only there: SQLite needs nothing of pg.
        if (!fields.readOnly && isPostgres(db)) {
          const { hasPgClient, withPgClient } = await import('./postgres.js');
          if (hasPgClient(db)) {
            const { copyNewLeads } = await import('./lead-copy.js');
            for (let attempt = 1; ; attempt++) {
              try {
                return await withPgClient(db, (client, clientDb) =>
                  clientDb.transaction().execute((trx) =>
                    fn(trx, async (leads) => {
                      if (leads.length > COPY_FROM_LEADS) return copyNewLeads(client, trx, leads, { campaignId, sourceFile, now, idTurn });
                      await idTurn.previous;
                      const ids = await insertNewLeads(trx, smallBatchInserts(db), leads, { campaignId, sourceFile, now });
                      // Its ids are taken: the next batch may take its own (as COPY's do after nextval).
                      idTurn.done();
                      return ids;
                    }),
                  ),
                );
              } catch (err) {
                // Two writers (or a writer and the daemon) that met on the counter rows in
                // opposite orders: the server rolled this batch back whole; run it again.
                if (attempt >= BATCH_ATTEMPTS || !isLockConflict(err)) throw err;
              }
            }
          }
        }
        return await viaInsert(fn);
      } finally {
        // Whatever happened, the next batch may take its ids.
        idTurn.done();
      }
    },
  };
}

/**
 * Up to this many new leads go in by one INSERT … RETURNING rather than COPY. COPY is the
 * bulk path (lead-copy.ts), but it takes three exchanges with the server (the ids, then the
 * COPY and its data), each a wake-up of the server's process; an API POST of one lead
 * (a CRM's usual request) needs one. On a host where the daemon and PostgreSQL share the
 * cores, every wake-up can take the daemon's thread off its core (bench/RESULTS.md, issue
 * 23). The ids still follow the rows' order, after the batch before (its turn).
 */
const COPY_FROM_LEADS = 64;

/**
 * The small batches' inserts, one per store: the statement reads the columns' types from the
 * catalog once (bulk-insert.ts), not once per request. Keyed by the store's own adapter (a
 * batch's transaction runs on a Kysely of its connection, made afresh each time).
 */
const smallInserts = new WeakMap<object, LeadInserts>();
function smallBatchInserts(db: Kysely<Database>): LeadInserts {
  const key = db.getExecutor().adapter;
  let inserts = smallInserts.get(key);
  if (!inserts) smallInserts.set(key, (inserts = leadInserts()));
  return inserts;
}

/** Tries of one PostgreSQL batch that lost a lock conflict. */
const BATCH_ATTEMPTS = 3;

/** PostgreSQL's deadlock_detected and lock_not_available (lock_timeout). */
function isLockConflict(err: unknown): boolean {
  const code = sqlState(err);
  return code === DEADLOCK_DETECTED || code === LOCK_NOT_AVAILABLE;
}

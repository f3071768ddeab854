import type { Kysely } from 'kysely';
import type { Database } from './types.js';

// Answers kept under an Idempotency-Key (migration 0015). The row is inserted FIRST in the
// transaction that writes the request's leads and filled with the answer LAST in it, so:
// - a retry after the commit finds the answer and writes nothing;
// - two requests with the same key at once: the primary key makes the second one's insert
//   wait for the first transaction (PostgreSQL) or its turn on the one writer (SQLite),
//   then fail as a duplicate key; its caller rolls back and answers from the stored row;
// - a request that failed rolled its row back with its leads: a retry runs afresh.
// No map in memory: every instance sharing the database sees the same rows.

/** A stored answer. */
export interface IdempotentAnswer {
  requestHash: string;
  status: number;
  responseJson: string;
}

/** The answer kept under (owner, key), unless it ran out. */
export async function findIdempotentAnswer(db: Kysely<Database>, owner: string, key: string, now: number): Promise<IdempotentAnswer | undefined> {
  const row = await db
    .selectFrom('api_idempotency')
    .select(['request_hash', 'status', 'response_json'])
    .where('owner', '=', owner)
    .where('idempotency_key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row ? { requestHash: row.request_hash, status: Number(row.status), responseJson: row.response_json } : undefined;
}

/** Another request holds the key (its answer is live, or its transaction committed it first): look again. */
export class IdempotencyKeyHeld extends Error {
  constructor() {
    super('the Idempotency-Key is held by another request');
    this.name = 'IdempotencyKeyHeld';
  }
}

/**
 * Takes the key for this request in the caller's transaction, in one statement: a new row,
 * or an expired row of the same key taken over. Throws IdempotencyKeyHeld when the key's
 * row is live, and the database's duplicate-key error when it cannot tell (isDuplicateKey).
 * On PostgreSQL the upsert waits for a transaction that inserted the key and has not ended.
 */
export async function claimIdempotencyKey(db: Kysely<Database>, fields: { owner: string; key: string; requestHash: string; now: number; expiresAt: number }): Promise<void> {
  const row = { owner: fields.owner, idempotency_key: fields.key, request_hash: fields.requestHash, status: 0, response_json: '', created_at: fields.now, expires_at: fields.expiresAt };
  const result = await db
    .insertInto('api_idempotency')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['owner', 'idempotency_key'])
        .doUpdateSet({ request_hash: row.request_hash, status: 0, response_json: '', created_at: row.created_at, expires_at: row.expires_at })
        .where('api_idempotency.expires_at', '<=', fields.now),
    )
    .executeTakeFirst();
  if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) throw new IdempotencyKeyHeld();
}

/** Fills the claimed key with the request's answer, in the same transaction. */
export async function keepIdempotentAnswer(db: Kysely<Database>, owner: string, key: string, status: number, responseJson: string): Promise<void> {
  await db.updateTable('api_idempotency').set({ status, response_json: responseJson }).where('owner', '=', owner).where('idempotency_key', '=', key).execute();
}

/** Deletes the answers that ran out; returns how many. */
export async function sweepIdempotentAnswers(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('api_idempotency').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A unique or primary key refused a row (SQLite's SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY, PostgreSQL's 23505). */
export function isDuplicateKey(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

import { isDuplicateKey } from './idempotency.js';

// A lease's INSERT … ON CONFLICT (its key) DO UPDATE on a table with a second unique index
// (the fences of migration 0036): when two instances insert a row nobody has inserted yet at
// the same moment on PostgreSQL, both pass ON CONFLICT's check before either row is in, and
// the second then meets the first one's entry in the other index, which ON CONFLICT does not
// arbitrate, so it fails with unique_violation instead of taking the conflict path. The row
// is in by then, so the statement run once more decides as usual. Only for a statement run
// on its own (not inside a transaction, which the error has aborted).

/** Runs `upsert`, and once more should it lose such a race. */
export async function upsertOnceMore<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return upsert();
  }
}

import type { Kysely } from 'kysely';
import { FINAL_LEAD_STATES, type Database } from './types.js';

// Retention (daemon config results.retention_days): the personal data of calls older than
// the limit is erased, the rows that count them stay. Batches of ids, each its own short
// transaction, so a sweep over a million rows never holds the store from the engine.

const BATCH = 1000;

export interface ErasedByRetention {
  /** Call results whose transcript, recording URL, extracted variables and evaluation were erased. */
  results: number;
  /** Final leads whose variables (the lead file's own columns) were erased. */
  leads: number;
}

/** Erases personal data of results received, and final leads last changed, before `cutoff`. */
export async function eraseBefore(db: Kysely<Database>, cutoff: number, now: number): Promise<ErasedByRetention> {
  const erased: ErasedByRetention = { results: 0, leads: 0 };
  for (;;) {
    const ids = await db.selectFrom('call_results').select('attempt_id').where('erased_at', 'is', null).where('received_at', '<', cutoff).limit(BATCH).execute();
    if (ids.length === 0) break;
    const done = await db
      .updateTable('call_results')
      .set({ recording_url: null, transcript_json: null, extracted_json: null, evaluation_json: null, erased_at: now })
      .where('attempt_id', 'in', ids.map((r) => r.attempt_id))
      .where('erased_at', 'is', null)
      .executeTakeFirst();
    erased.results += Number(done.numUpdatedRows);
    if (ids.length < BATCH) break;
  }
  // Final leads only: a lead still being called needs its variables for make_call.
  // updated_at stays as it is: the status pace counts leads finished by it.
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('leads')
      .select('id')
      .where('id', '>', after)
      .where('state', 'in', [...FINAL_LEAD_STATES])
      .where('updated_at', '<', cutoff)
      .where('variables_json', '!=', '{}')
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    after = rows.at(-1)!.id;
    const done = await db.updateTable('leads').set({ variables_json: '{}' }).where('id', 'in', rows.map((r) => r.id)).executeTakeFirst();
    erased.leads += Number(done.numUpdatedRows);
    if (rows.length < BATCH) break;
  }
  // Callbacks asked that long ago and no longer waiting (a waiting one still passes its
  // variables to its call): the person's words, the extracted variables, the dropped reason.
  for (;;) {
    const ids = await db
      .selectFrom('callbacks')
      .select('id')
      .where('created_at', '<', cutoff)
      .where('state', '!=', 'scheduled')
      .where((eb) => eb.or([eb('asked', '!=', ''), eb('extracted_json', 'is not', null), eb('dropped_reason', 'is not', null)]))
      .limit(BATCH)
      .execute();
    if (ids.length === 0) break;
    await db.updateTable('callbacks').set({ asked: '', extracted_json: null, dropped_reason: null }).where('id', 'in', ids.map((r) => r.id)).execute();
    if (ids.length < BATCH) break;
  }
  // Hook events still undelivered that old (a receiver down for days) lose their bodies too.
  await db.updateTable('hook_outbox').set({ body: null }).where('created_at', '<', cutoff).where('body', 'is not', null).execute();
  return erased;
}

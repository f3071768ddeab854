import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { LIVE_ATTEMPT_STATES, type Database } from './types.js';

// `campaignd forget`: erases one phone number's personal data from every table and keeps
// the rows that count (leads, attempts, results, events stay; their numbers become
// tombstones and their personal fields empty). One transaction.

/** What was erased, for the command's report. */
export interface ForgetReport {
  /** Leads that had the number as a contact (their variables erased). */
  leads: number;
  /** Of those, leads still to be called, now final (suppressed). */
  leadsStopped: number;
  contacts: number;
  attempts: number;
  /** Call results whose transcript, recording URL, extracted variables and evaluation were erased. */
  results: number;
  /** Events whose details were erased. */
  events: number;
  /** Undelivered hook events whose bodies were erased (they will not be sent). */
  hookEvents: number;
  /** Whether the number was put on the suppression list now. */
  suppressed: boolean;
  alreadySuppressed: boolean;
}

/** A call to the number is live: its outcome still has to find its attempt by number. */
export class LiveCallError extends Error {
  constructor(readonly phone: string) {
    super(`a call to ${phone} is in progress: its outcome is matched by the number; run forget again once it ended`);
    this.name = 'LiveCallError';
  }
}

/**
 * The callbacks the leads' calls asked for keep their rows (status counts them) without the
 * person's words, the asking call's extracted variables, or a dropped reason (it quotes the
 * lead's reason, which may quote the words).
 */
async function eraseCallbacksOf(trx: Kysely<Database>, leadIds: readonly number[]): Promise<void> {
  await trx.updateTable('callbacks').set({ asked: '', extracted_json: null, dropped_reason: null }).where('lead_id', 'in', leadIds).execute();
}

/** The text that replaces an erased number: unique per row, holding nothing of the number. */
const tombstone = (kind: string, id: number | string): string => `erased:${kind}:${id}`;

/** Erases `phone` (E.164) everywhere; suppresses it unless `keepCalling`. */
export async function forgetNumber(db: Kysely<Database>, phone: string, opts: { now: number; keepCalling: boolean }): Promise<ForgetReport> {
  return db.transaction().execute(async (trx) => {
    const live = await trx.selectFrom('attempts').select('id').where('phone_number', '=', phone).where('state', 'in', [...LIVE_ATTEMPT_STATES]).executeTakeFirst();
    if (live) throw new LiveCallError(phone);

    const byLead = await trx.selectFrom('leads').select('id').where('phone_number', '=', phone).execute();
    const byContact = await trx.selectFrom('lead_contacts').select('lead_id').where('phone_number', '=', phone).execute();
    const byAttempt = await trx.selectFrom('attempts').select('lead_id').where('phone_number', '=', phone).execute();
    const leadIds = [...new Set([...byLead.map((r) => r.id), ...byContact.map((r) => r.lead_id), ...byAttempt.map((r) => r.lead_id)])];
    const report: ForgetReport = { leads: leadIds.length, leadsStopped: 0, contacts: 0, attempts: 0, results: 0, events: 0, hookEvents: 0, suppressed: false, alreadySuppressed: false };

    for (const chunk of chunks(leadIds)) {
      // Still to be called: without its number it cannot be; final, so the counts stay right.
      const stopped = await trx
        .updateTable('leads')
        .set({ state: 'suppressed', next_due_at: null, updated_at: opts.now })
        .where('id', 'in', chunk)
        .where('state', 'in', ['pending', 'retry-scheduled', 'calling'])
        .executeTakeFirst();
      report.leadsStopped += Number(stopped.numUpdatedRows);
      await trx
        .updateTable('leads')
        .set({ variables_json: '{}', state_reason: 'personal data erased (campaignd forget)' })
        .where('id', 'in', chunk)
        .execute();
      const attemptIds = (await trx.selectFrom('attempts').select('id').where('lead_id', 'in', chunk).execute()).map((r) => r.id);
      for (const ids of chunks(attemptIds)) {
        const erased = await trx
          .updateTable('call_results')
          .set({ recording_url: null, transcript_json: null, extracted_json: null, evaluation_json: null, erased_at: opts.now })
          .where('attempt_id', 'in', ids)
          .executeTakeFirst();
        report.results += Number(erased.numUpdatedRows);
        const events = await trx.updateTable('events').set({ data_json: null }).where('attempt_id', 'in', ids).where('data_json', 'is not', null).executeTakeFirst();
        report.events += Number(events.numUpdatedRows);
      }
      const events = await trx.updateTable('events').set({ data_json: null }).where('lead_id', 'in', chunk).where('data_json', 'is not', null).executeTakeFirst();
      report.events += Number(events.numUpdatedRows);
      await eraseCallbacksOf(trx, chunk);
      // Undelivered hook events about these leads: their bodies go; the sender drops them.
      const hooked = await trx.updateTable('hook_outbox').set({ body: null }).where('lead_id', 'in', chunk).where('body', 'is not', null).executeTakeFirst();
      report.hookEvents += Number(hooked.numUpdatedRows);
    }
    // The number itself, wherever a row holds it (ids cast to text: PostgreSQL does not
    // concatenate a parameter of unknown type with a number).
    for (const id of byLead.map((r) => r.id)) {
      await trx.updateTable('leads').set({ phone_number: tombstone('lead', id), dedupe_key: tombstone('lead', id) }).where('id', '=', id).execute();
    }
    await trx.updateTable('leads').set({ dedupe_key: sql`cast(${'erased:lead:'} as text) || cast(id as text)` }).where('dedupe_key', '=', phone).execute();
    const contacts = await trx
      .updateTable('lead_contacts')
      .set({ phone_number: sql`cast(${'erased:contact:'} as text) || cast(lead_id as text) || ':' || cast(position as text)` })
      .where('phone_number', '=', phone)
      .executeTakeFirst();
    report.contacts = Number(contacts.numUpdatedRows);
    const attempts = await trx
      .updateTable('attempts')
      .set({ phone_number: sql`cast(${'erased:attempt:'} as text) || cast(id as text)`, detail: null })
      .where('phone_number', '=', phone)
      .executeTakeFirst();
    report.attempts = Number(attempts.numUpdatedRows);
    // Any other event that names the number (an import summary, a problem).
    const digits = phone.replace(/^\+/, '');
    const named = await trx.updateTable('events').set({ data_json: null }).where('data_json', 'like', `%${digits}%`).executeTakeFirst();
    report.events += Number(named.numUpdatedRows);

    const listed = await trx.selectFrom('suppressions').select('phone_number').where('phone_number', '=', phone).executeTakeFirst();
    report.alreadySuppressed = listed !== undefined;
    if (!opts.keepCalling && !listed) {
      await trx.insertInto('suppressions').values({ phone_number: phone, source: 'forget', added_at: opts.now }).execute();
      report.suppressed = true;
    }
    return report;
  });
}

function chunks<T>(items: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Whether the erased bytes are gone from the database files too. */
export interface ScrubResult {
  ok: boolean;
  /** Why not, when not. */
  detail?: string;
  /** False on PostgreSQL, which has no file of ours to rewrite. */
  rewritten: boolean;
}

/**
 * Erased values linger in SQLite's free space: freed pages, the unused parts of pages,
 * older page images in the write-ahead log. VACUUM writes the database anew from its live
 * rows, and a TRUNCATE checkpoint folds the log into the file and empties it. SQLite only
 * (the one place outside database.ts that says so).
 */
export async function scrubFreedSpace(db: Kysely<Database>): Promise<ScrubResult> {
  // PostgreSQL: the UPDATEs above leave the old row versions in the tables until a vacuum
  // prunes them; this one does it now for the tables forget changed (a plain VACUUM: no lock
  // that would stop a running daemon; VACUUM FULL, which rewrites the files, would). WAL
  // archives and backups follow the operator's retention.
  if (isPostgres(db)) {
    try {
      await sql`vacuum leads, lead_contacts, attempts, call_results, events, hook_outbox`.execute(db);
    } catch (err) {
      return { ok: false, rewritten: false, detail: `VACUUM failed (${(err as Error).message})` };
    }
    return { ok: true, rewritten: false };
  }
  try {
    await sql`vacuum`.execute(db);
  } catch (err) {
    return { ok: false, rewritten: false, detail: `VACUUM failed (${(err as Error).message}): is the daemon running? ` };
  }
  const result = await sql<{ busy: number; log: number; checkpointed: number }>`pragma wal_checkpoint(truncate)`.execute(db);
  const row = result.rows[0];
  if (row && Number(row.busy) !== 0) return { ok: false, rewritten: true, detail: 'the write-ahead log could not be emptied: another process is reading the database' };
  return { ok: true, rewritten: true };
}

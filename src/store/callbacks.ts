import type { Kysely, Transaction } from 'kysely';
import { DUE_LEAD_STATES_SQL } from './state-lists.js';
import type { CallbackState, Database } from './types.js';
import { DUE_LEAD_COLUMNS, type DueLead } from './due-leads.js';
import { prepared } from './prepared.js';

// Callbacks the person asks for (README, "Callbacks the person asks for"): their rows
// (migration 0020). Written only inside the transaction that recorded the asking call's
// outcome, so a callback is decided once per call whatever reports the call, and a crash
// leaves either the outcome with its callback or neither. A scheduled callback whose lead
// ends otherwise is dropped by a trigger on the lead's state (migration 0026), in the
// transaction that ended the lead, whichever code wrote that state.

type Trx = Transaction<Database>;

/** The migration that made the callbacks table (readers of an older store leave callbacks out). */
export const CALLBACKS_MIGRATION = '0020_callbacks';

/** What a call asked, as recorded: scheduled when dueAt is set, else refused with a reason. */
export interface CallbackNote {
  /** The person's words. */
  asked: string;
  zone: string;
  /** The moment the words name (null when they could not be read). */
  askedAt: number | null;
  /** The first allowed moment from askedAt; null: refused. */
  dueAt: number | null;
  /** Why dueAt is later than askedAt. */
  movedReason: string | null;
  refusedReason: string | null;
  /** The asking call's extracted variables (previous.NAME of the callback call). */
  extracted: Record<string, unknown>;
}

/** Records the note of the call `attemptId` (a second note for the same call is ignored). */
export async function recordCallback(trx: Trx, ids: { campaignId: number; leadId: number; attemptId: number }, note: CallbackNote, now: number): Promise<void> {
  await trx
    .insertInto('callbacks')
    .values({
      campaign_id: ids.campaignId,
      lead_id: ids.leadId,
      attempt_id: ids.attemptId,
      state: note.dueAt === null ? 'refused' : 'scheduled',
      asked: note.asked,
      zone: note.zone,
      asked_at: note.askedAt,
      due_at: note.dueAt,
      moved_reason: note.movedReason,
      refused_reason: note.refusedReason,
      extracted_json: note.dueAt === null ? null : JSON.stringify(note.extracted),
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('attempt_id').doNothing())
    .execute();
}

/**
 * The call `attemptId` of a lead with a scheduled callback was that callback's call: the
 * callback is placed, and the attempt is taken back from the lead's count (a callback does
 * not use a retry). True when it was one.
 */
export async function callbackCallEnded(trx: Trx, leadId: number, attemptId: number, now: number): Promise<boolean> {
  // Runs for every ended call of a lead that was ever given a callback: prepared (prepared.ts).
  if ((await callbackPlacedQuery.affected(trx, { leadId, attemptId, now })) === 0) return false;
  await trx
    .updateTable('leads')
    .set((eb) => ({ contact_attempts: eb.case().when('contact_attempts', '>', 0).then(eb('contact_attempts', '-', 1)).else(0).end() }))
    .where('id', '=', leadId)
    .execute();
  return true;
}

const callbackPlacedQuery = prepared((db, v: { leadId: number; attemptId: number; now: number }) =>
  db.updateTable('callbacks').set({ state: 'placed', placed_attempt_id: v.attemptId, updated_at: v.now }).where('lead_id', '=', v.leadId).where('state', '=', 'scheduled'),
);

/** A campaign's leads due at `now` with a scheduled callback, most overdue first (served by callbacks_campaign_state). */
export async function dueCallbackLeads(db: Kysely<Database>, campaignId: number, now: number, limit: number): Promise<(DueLead & { previous_json: string | null })[]> {
  return db
    .selectFrom('callbacks')
    .innerJoin('leads', 'leads.id', 'callbacks.lead_id')
    .leftJoin('lead_contacts', (join) => join.onRef('lead_contacts.lead_id', '=', 'leads.id').onRef('lead_contacts.position', '=', 'leads.contact_position'))
    .select([...DUE_LEAD_COLUMNS, 'callbacks.extracted_json as previous_json'])
    .where('callbacks.campaign_id', '=', campaignId)
    .where('callbacks.state', '=', 'scheduled')
    .where('leads.state', 'in', DUE_LEAD_STATES_SQL)
    .where('leads.next_due_at', '<=', now)
    .orderBy('leads.next_due_at')
    .orderBy('leads.id')
    .limit(limit)
    .execute();
}

export type CallbackCounts = Record<CallbackState, number>;

export function emptyCallbackCounts(): CallbackCounts {
  return { scheduled: 0, placed: 0, refused: 0, dropped: 0 };
}

/** Callbacks per state of each campaign (status): one grouped count over the callbacks_campaign_state index (a row per asking call, not per lead). */
export async function callbackCounts(db: Kysely<Database>): Promise<Map<number, CallbackCounts>> {
  const rows = await db
    .selectFrom('callbacks')
    .select(['campaign_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['campaign_id', 'state'])
    .execute();
  const out = new Map<number, CallbackCounts>();
  for (const r of rows) {
    const c = out.get(Number(r.campaign_id)) ?? emptyCallbackCounts();
    c[r.state] = Number(r.n);
    out.set(Number(r.campaign_id), c);
  }
  return out;
}

/** Whether any of these campaigns (undefined: any) has a callback row (the export joins callbacks only then). */
export async function anyCallbacks(db: Kysely<Database>, campaignIds: readonly number[] | undefined): Promise<boolean> {
  let q = db.selectFrom('callbacks').select('id').limit(1);
  if (campaignIds) q = q.where('campaign_id', 'in', campaignIds.length > 0 ? [...campaignIds] : [-1]);
  return (await q.executeTakeFirst()) !== undefined;
}

/** A lead's callbacks, oldest first (explain). */
export async function callbacksOfLead(db: Kysely<Database>, leadId: number) {
  return db.selectFrom('callbacks').selectAll().where('lead_id', '=', leadId).orderBy('id').execute();
}

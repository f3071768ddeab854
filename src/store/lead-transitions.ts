import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import type { AttemptRow, Database, LeadRow, LeadState } from './types.js';
import { prepared } from './prepared.js';
import { moveLead, suppressByRule, type MoveRequest } from './lead-moves.js';
import { callbackCallEnded, recordCallback, type CallbackNote } from './callbacks.js';

// What an attempt's end does to its lead (rules 4 and 7). Always called inside the
// transaction that ended the attempt, so the attempt and its lead never disagree. The
// engine decides (retry-policy.ts) and passes its decision in; the store only writes it.

type Trx = Transaction<Database>;

/** A lead with the number of its contacts (the primary included), as the retry policy needs it. */
export type LeadWithContacts = LeadRow & { contact_count: number };

/** What the retry settings decide (the engine's retry policy returns one); `reason` names an on_result rule that decided instead. */
export type RetryLeadDecision =
  | { kind: 'complete'; reason?: string }
  | { kind: 'retry'; nextDueAt: number; reason?: string }
  | { kind: 'next-contact'; contactPosition: number; nextDueAt: number; reason?: string }
  | { kind: 'exhausted'; reason: string };

/**
 * The lead's next step after an attempt ended: the retry settings', an on_result rule's,
 * or a callback the person asked for. `callback` is what the call asked, recorded with
 * the decision (scheduled for kind 'callback', else refused with its reason).
 */
export type LeadDecision = (
  | RetryLeadDecision
  | { kind: 'invalid'; reason: string }
  | { kind: 'suppress'; reason: string; phone: string; campaign: string }
  /** `fallback` applies when the target campaign is not in the store. */
  | ({ kind: 'move'; fallback: RetryLeadDecision } & MoveRequest)
  | { kind: 'callback'; nextDueAt: number; reason: string }
) & { callback?: CallbackNote };

/**
 * Decides from the lead as read inside the transaction (its contact and attempts on it),
 * so a decision is never made on a stale row.
 */
export type DecideLead = (lead: LeadWithContacts) => LeadDecision;

async function loadLead(trx: Trx, leadId: number): Promise<LeadWithContacts | undefined> {
  const readAhead = leadsReadAhead.get(trx);
  const ahead = readAhead?.get(leadId);
  if (ahead) {
    readAhead!.delete(leadId);
    return ahead;
  }
  const [lead] = await leadQuery.rows(trx, { id: leadId });
  return lead && withPrimary(lead);
}

/** What a transaction read ahead of its batch's decisions and has not handed out yet. */
const leadsReadAhead = new WeakMap<object, Map<number, LeadWithContacts>>();

/**
 * Reads the leads of a group-commit batch's attempts in one statement, before the first of
 * their decisions (attempts.ts `attemptByCallId`, for the batch's webhooks): on PostgreSQL
 * each lead read alone was a round trip on the engine's one connection, one per call. Each
 * row is handed out once, to the first decision on its lead in this transaction; a second
 * one reads the lead again, as the first left it. Locked in the order of their ids
 * (`forDecision`), so two batches never wait for each other's leads in a circle.
 */
export async function readLeadsAhead(trx: Kysely<Database>, leadIds: readonly number[]): Promise<void> {
  const ids = [...new Set(leadIds)].sort((a, b) => a - b);
  if (ids.length < 2 || !trx.isTransaction) return;
  const rows = isPostgres(trx) ? await leadsQueryPg.rows(trx, { ids }) : await leadsQuerySqlite.rows(trx, { ids: JSON.stringify(ids) });
  leadsReadAhead.set(trx, new Map(rows.map((row) => [Number(row.id), withPrimary(row)])));
}

const leadsQueryPg = prepared(
  (db, v: { ids: number[] }) => forDecision(db, db.selectFrom('leads').selectAll('leads').select(contactCount).where('id', '=', sql<number>`any(${v.ids}::bigint[])`).orderBy('id')),
  { planEachRun: true },
);
const leadsQuerySqlite = prepared((db, v: { ids: string }) =>
  db.selectFrom('leads').selectAll('leads').select(contactCount).where('id', 'in', sql<number>`(select value from json_each(${v.ids}))`),
);

/** The primary is the lead's own number; lead_contacts holds the secondary ones. */
function withPrimary<L extends LeadRow & { contact_count: unknown }>(lead: L): L & LeadWithContacts {
  return { ...lead, contact_count: 1 + Number(lead.contact_count) };
}

const leadQuery = prepared((db, v: { id: number }) => forDecision(db, db.selectFrom('leads').selectAll('leads').select(contactCount).where('id', '=', v.id)));

/**
 * The lead is read to decide its next step, and written with the decision in the same
 * transaction, without the state it was read in as a condition. On PostgreSQL another
 * connection (the API's DELETE, lead-cancel.ts) could commit a change in between and be
 * overwritten: a cancelled lead put back to retry and called again. The read therefore locks
 * the row; a cancel waits for the decision's commit and then judges the row as decided.
 * SQLite has one writer, and no row locks to ask for.
 */
function forDecision<Q extends { forUpdate(): Q }>(db: Kysely<Database>, query: Q): Q {
  return isPostgres(db) ? query.forUpdate() : query;
}

/** The lead's secondary contacts (lead_contacts from position 1), as `contact_count`. */
function contactCount(eb: ExpressionBuilder<Database, 'leads'>) {
  return eb
    .selectFrom('lead_contacts')
    .select(eb.fn.countAll<number>().as('n'))
    .whereRef('lead_contacts.lead_id', '=', 'leads.id')
    .where('lead_contacts.position', '>=', 1)
    .as('contact_count');
}

async function applyDecision(trx: Trx, lead: LeadRow, decision: LeadDecision, now: number): Promise<LeadDecision> {
  switch (decision.kind) {
    case 'complete':
      await completeQuery.write(trx, { id: lead.id, reason: decision.reason ?? null, now });
      return decision;
    case 'retry':
      await retryQuery.write(trx, { id: lead.id, dueAt: decision.nextDueAt, reason: decision.reason ?? null, now });
      return decision;
    case 'next-contact':
      await nextContactQuery.write(trx, { id: lead.id, dueAt: decision.nextDueAt, position: decision.contactPosition, reason: decision.reason ?? null, now });
      return decision;
    case 'exhausted':
      await exhaustedQuery.write(trx, { id: lead.id, reason: decision.reason, now });
      return decision;
    case 'invalid':
      await trx.updateTable('leads').set({ state: 'invalid', state_reason: decision.reason, next_due_at: null, updated_at: now }).where('id', '=', lead.id).execute();
      return decision;
    case 'suppress':
      await suppressByRule(trx, lead, decision.phone, decision.campaign, decision.reason, now);
      return decision;
    case 'move':
      // The target campaign is not in the store (its file is broken): the retry settings decide.
      if (await moveLead(trx, lead, decision, now)) return decision;
      return applyDecision(trx, lead, decision.fallback, now);
    case 'callback':
      // Due at the asked moment; the dial loop's gate moves it on to the first allowed one.
      await trx
        .updateTable('leads')
        .set((eb) => ({ state: 'retry-scheduled', state_reason: decision.reason, next_due_at: decision.nextDueAt, callbacks_given: eb('callbacks_given', '+', 1), updated_at: now }))
        .where('id', '=', lead.id)
        .execute();
      return decision;
  }
}

const completeQuery = prepared((db, v: { id: number; reason: string | null; now: number }) =>
  db.updateTable('leads').set({ state: 'completed', state_reason: v.reason, next_due_at: null, updated_at: v.now }).where('id', '=', v.id),
);

const retryQuery = prepared((db, v: { id: number; dueAt: number; reason: string | null; now: number }) =>
  db.updateTable('leads').set({ state: 'retry-scheduled', state_reason: v.reason, next_due_at: v.dueAt, updated_at: v.now }).where('id', '=', v.id),
);

const nextContactQuery = prepared((db, v: { id: number; dueAt: number; position: number; reason: string | null; now: number }) =>
  db
    .updateTable('leads')
    .set({ state: 'retry-scheduled', state_reason: v.reason, next_due_at: v.dueAt, contact_position: v.position, contact_attempts: 0, updated_at: v.now })
    .where('id', '=', v.id),
);

const exhaustedQuery = prepared((db, v: { id: number; reason: string; now: number }) =>
  db.updateTable('leads').set({ state: 'reached-max-retries', state_reason: v.reason, next_due_at: null, updated_at: v.now }).where('id', '=', v.id),
);

/** Decides (rule 4) and writes the lead's next step, with the callback the call asked for, if any. */
async function decideAndApply(trx: Trx, lead: LeadWithContacts, attempt: AttemptRow, decide: DecideLead, now: number): Promise<LeadDecision> {
  const decision = decide(lead);
  const applied = await applyDecision(trx, lead, decision, now);
  if (decision.callback) await recordCallback(trx, { campaignId: lead.campaign_id, leadId: lead.id, attemptId: attempt.id }, decision.callback, now);
  return applied;
}

/** Moves the lead to its next state after `attempt` ended, as `decide` says. */
export async function leadAfterOutcome(trx: Trx, attempt: AttemptRow, decide: DecideLead, now: number): Promise<LeadDecision | null> {
  const lead = await loadLead(trx, attempt.lead_id);
  // A lead moved on already (a duplicate delivery, or an operator's change) is left alone.
  if (!lead || lead.state !== 'calling' || lead.contact_position !== attempt.contact_position) return null;
  // The call a scheduled callback was for: placed now, and not counted against max_retries.
  // A callback is only ever scheduled with callbacks_given counting it (applyDecision), so a
  // lead that was never given one skips the write (on PostgreSQL, a round trip per call).
  if (Number(lead.callbacks_given) > 0 && (await callbackCallEnded(trx, lead.id, attempt.id, now))) lead.contact_attempts = Math.max(0, lead.contact_attempts - 1);
  return decideAndApply(trx, lead, attempt, decide, now);
}

/**
 * A webhook said "success" but the call list later showed a machine answered: the lead
 * completed by that attempt is decided again as a voicemail, if nothing happened since.
 */
export async function reviseCompletedLead(trx: Trx, attempt: AttemptRow, decide: DecideLead, now: number): Promise<LeadDecision | null> {
  // The lead and its latest attempt in one read: with rules on the result, most confirmed
  // successes come here, and on PostgreSQL each statement is a round trip.
  const [row] = await revisedLeadQuery.rows(trx, { id: attempt.lead_id });
  if (!row || row.state !== 'completed' || Number(row.last_attempt_id) !== attempt.id) return null;
  const { last_attempt_id: _last, ...lead } = row;
  return decideAndApply(trx, withPrimary(lead), attempt, decide, now);
}

const revisedLeadQuery = prepared((db, v: { id: number }) =>
  db
    .selectFrom('leads')
    .selectAll('leads')
    .select((eb) => [
      contactCount(eb),
      eb.selectFrom('attempts').select((sub) => sub.fn.max('attempts.id').as('m')).whereRef('attempts.lead_id', '=', 'leads.id').as('last_attempt_id'),
    ])
    .where('id', '=', v.id)
    .$call((q) => forDecision(db, q)),
);

/**
 * Puts a lead back as if the attempt had not happened (429, window closed before
 * sending, token rejected, settled as never placed): the attempt is not counted.
 */
export async function leadBackUncounted(trx: Trx, attempt: AttemptRow, dueAt: number, reason: string | null, now: number): Promise<void> {
  await leadUncounted(trx, attempt, now, (attempts, lead) => ({
    state: attempts > 0 || lead.contact_position > 0 ? 'retry-scheduled' : 'pending',
    state_reason: reason,
    next_due_at: dueAt,
  }));
}

/**
 * The pre-dial check refused the lead before its call was placed: the lead is cancelled
 * with the check's reason, and the attempt that was not placed is not counted.
 */
export async function leadCancelledUncounted(trx: Trx, attempt: AttemptRow, reason: string, now: number): Promise<void> {
  await leadUncounted(trx, attempt, now, () => ({ state: 'cancelled', state_reason: reason, next_due_at: null }));
}

/** Takes back the claim's count of `attempt` on its lead, if the lead is still calling on it, and moves it as `next` says. */
async function leadUncounted(
  trx: Trx,
  attempt: AttemptRow,
  now: number,
  next: (attempts: number, lead: LeadWithContacts) => { state: LeadState; state_reason: string | null; next_due_at: number | null },
): Promise<void> {
  const lead = await loadLead(trx, attempt.lead_id);
  if (!lead || lead.contact_position !== attempt.contact_position) return;
  const attempts = Math.max(0, lead.contact_attempts - 1);
  // Cancelled while this attempt was claimed: it stays cancelled, only the count is taken back.
  if (lead.state === 'cancelled') {
    await trx.updateTable('leads').set({ contact_attempts: attempts }).where('id', '=', lead.id).execute();
    return;
  }
  if (lead.state !== 'calling') return;
  await trx
    .updateTable('leads')
    .set({ ...next(attempts, lead), contact_attempts: attempts, updated_at: now })
    .where('id', '=', lead.id)
    .execute();
}

/** The service refused the number (400): try the next contact, or the lead is invalid. */
export async function leadContactInvalid(trx: Trx, attempt: AttemptRow, reason: string, now: number): Promise<void> {
  const lead = await loadLead(trx, attempt.lead_id);
  if (!lead || lead.state !== 'calling' || lead.contact_position !== attempt.contact_position) return;
  if (lead.contact_position + 1 < lead.contact_count) {
    await trx
      .updateTable('leads')
      .set({
        state: 'retry-scheduled',
        state_reason: `contact ${lead.contact_position} rejected: ${reason}`,
        contact_position: lead.contact_position + 1,
        contact_attempts: 0,
        next_due_at: now,
        updated_at: now,
      })
      .where('id', '=', lead.id)
      .execute();
    return;
  }
  await trx
    .updateTable('leads')
    .set({ state: 'invalid', state_reason: reason, next_due_at: null, updated_at: now })
    .where('id', '=', lead.id)
    .execute();
}

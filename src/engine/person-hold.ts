import type { Kysely } from 'kysely';
import { isSuppressed } from '../store/suppressions.js';
import type { Database, LeadState } from '../store/types.js';
import { capHold, capText } from './caps.js';
import { deferLead } from '../store/due-leads.js';
import type { LeadFacts, LeadPlan } from './planner.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// The facts the planner judges one lead on, read from the store (the suppression list
// and the attempts to the number), shared by the dial loop, `explain` and the preview so
// all ask planLead the same question. A lead held by the person's hours, rules or caps is
// deferred to the instant it may be called, so the due query never sees it again before
// then (the claim stays an index range scan however many leads wait).

const DAY_MS = 24 * 3_600_000;

export interface PersonHoldResult {
  until: number;
  reason: string;
}

/** A lead as the facts need it: its state, due time and own zone column. */
export interface LeadForFacts {
  state: LeadState;
  next_due_at: number | null;
  timezone: string | null;
}

/** Whether a number is on the suppression list, as the reader knows it. */
export type OnList = (phone: string) => boolean | Promise<boolean>;

/** The suppression list as the store holds it now. */
export const onListInStore =
  (db: Kysely<Database>): OnList =>
  (phone) =>
    isSuppressed(db, phone);

/**
 * Reads what planLead needs of one lead at `now`. `onList`: the suppression list (the
 * store's by default; the engine asks its copy first, then the store, since a number put
 * on the list since the copy was read must not be dialled). The caps are read only when
 * the person's hours are open now: they decide nothing otherwise (planLead's order), and
 * it spares a query per held lead.
 */
export async function readLeadFacts(db: Kysely<Database>, c: RuntimeCampaign, lead: LeadForFacts, phone: string, now: number, onList: OnList = onListInStore(db)): Promise<LeadFacts> {
  const person = c.person(phone, lead.timezone);
  const suppressed = await onList(phone);
  const cap = suppressed || person.closedBy(now) !== null ? null : await capHold(db, person.caps, phone, now);
  return { state: lead.state, nextDueAt: lead.next_due_at === null ? null : Number(lead.next_due_at), phone, suppressed, person, cap };
}

/** Until when, and why, a lead held by the person's hours, rules or caps waits; null for any other verdict. */
export function holdOf(plan: LeadPlan, now: number): PersonHoldResult | null {
  if (plan.kind === 'person-hours') return { until: plan.opening ?? now + DAY_MS, reason: `outside the person's hours: ${plan.label}` };
  if (plan.kind === 'attempt-cap') return { until: plan.hold.until, reason: capText(plan.hold) };
  return null;
}

/**
 * Defers the held leads of one pass in ONE transaction: a commit per lead was most of a
 * claim's cost when many due leads were outside their hours (right after an import).
 * Each lead moves only if it is still due (see deferLead).
 */
export async function deferHeld(db: Kysely<Database>, held: readonly ({ leadId: number } & PersonHoldResult)[], now: number): Promise<void> {
  if (held.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const h of held) await deferLead(trx, h.leadId, h.until, h.reason, now);
  });
}

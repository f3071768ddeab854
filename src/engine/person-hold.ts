import type { Kysely } from 'kysely';
import { isSuppressed } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { capHold, capText } from './caps.js';
import { deferLead, suppressLead, type DueLead } from '../store/due-leads.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// The scheduler's section-11 check of one due lead, kept out of the tick: is the person
// inside their own hours and rules now, and does no attempt cap hold their number? A held
// lead is deferred to the instant it may be called, so the due query never sees it again
// before then (the claim stays an index range scan however many leads wait).

const DAY_MS = 24 * 3_600_000;

export interface PersonHoldResult {
  until: number;
  reason: string;
}

/**
 * Why and until when a due lead must wait, or null when it may be called now. A number
 * put on the suppression list since the engine last read it (`suppress add`, an opt-out
 * in another campaign) makes the lead `suppressed` here; deferring it after that is a
 * no-op, since a final lead is not due.
 */
export async function personHold(db: Kysely<Database>, c: RuntimeCampaign, lead: DueLead, phone: string, now: number): Promise<PersonHoldResult | null> {
  if (await isSuppressed(db, phone)) {
    await suppressLead(db, lead.id, now);
    return { until: now, reason: 'on the suppression list' };
  }
  const person = c.person(phone, lead.timezone);
  const closed = person.closedBy(now);
  if (closed) {
    const opening = person.nextOpening(now);
    return { until: opening ?? now + DAY_MS, reason: `outside the person's hours: ${closed.label}` };
  }
  const hold = await capHold(db, person.caps, phone, now);
  if (hold) return { until: hold.until, reason: capText(hold) };
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

import type { Kysely } from 'kysely';
import type { Database } from '../store/types.js';
import { capHold, capText } from './caps.js';
import type { DueLead } from './due-leads.js';
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

/** Why and until when a due lead must wait, or null when it may be called now. */
export async function personHold(db: Kysely<Database>, c: RuntimeCampaign, lead: DueLead, phone: string, now: number): Promise<PersonHoldResult | null> {
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

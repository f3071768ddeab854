import type { Kysely } from 'kysely';
import { prepared } from './prepared.js';
import { DUE_LEAD_STATES_SQL } from './state-lists.js';
import type { Database } from './types.js';

// The hot queries of the scheduler. Both are served by the partial index leads_due
// (campaign_id, next_due_at, id) WHERE state IN ('pending', 'retry-scheduled'), so
// their cost stays logarithmic however many leads a campaign holds. (State lists are
// literals: see store/state-lists.ts.)

export interface DueLead {
  id: number;
  campaign_id: number;
  phone_number: string;
  contact_phone: string | null;
  contact_position: number;
  timezone: string | null;
  variables_json: string;
  next_due_at: number | null;
}

/** A campaign's leads due at `now`, most overdue first. */
export async function dueLeads(db: Kysely<Database>, campaignId: number, now: number, limit: number): Promise<DueLead[]> {
  return dueLeadsQuery.rows(db, { campaignId, now, limit });
}

const dueLeadsQuery = prepared((db, v: { campaignId: number; now: number; limit: number }) =>
  db
    .selectFrom('leads')
    .leftJoin('lead_contacts', (join) =>
      join.onRef('lead_contacts.lead_id', '=', 'leads.id').onRef('lead_contacts.position', '=', 'leads.contact_position'),
    )
    .select([
      'leads.id',
      'leads.campaign_id',
      'leads.phone_number',
      'lead_contacts.phone_number as contact_phone',
      'leads.contact_position',
      'leads.timezone',
      'leads.variables_json',
      'leads.next_due_at',
    ])
    .where('leads.campaign_id', '=', v.campaignId)
    .where('leads.state', 'in', DUE_LEAD_STATES_SQL)
    .where('leads.next_due_at', '<=', v.now)
    .orderBy('leads.next_due_at')
    .orderBy('leads.id')
    .limit(v.limit),
);

/** When the campaign's next lead falls due (null when none is waiting). */
export async function nextDueAt(db: Kysely<Database>, campaignId: number): Promise<number | null> {
  const [row] = await nextDueQuery.rows(db, { campaignId });
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

const nextDueQuery = prepared((db, v: { campaignId: number }) =>
  db
    .selectFrom('leads')
    .select((eb) => eb.fn.min('next_due_at').as('at'))
    .where('campaign_id', '=', v.campaignId)
    .where('state', 'in', DUE_LEAD_STATES_SQL),
);

/** Whether the campaign still has a lead that is not final. */
export async function hasActiveLeads(db: Kysely<Database>, campaignId: number): Promise<boolean> {
  const row = await db
    .selectFrom('leads')
    .select('id')
    .where('campaign_id', '=', campaignId)
    .where('state', 'in', ['pending', 'calling', 'retry-scheduled'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Moves a lead's due time (its own window is closed until then). */
export async function deferLead(db: Kysely<Database>, leadId: number, dueAt: number, reason: string, now: number): Promise<void> {
  await db
    .updateTable('leads')
    .set({ next_due_at: dueAt, state_reason: reason, updated_at: now })
    .where('id', '=', leadId)
    .where('state', 'in', DUE_LEAD_STATES_SQL)
    .execute();
}

/** Marks a due lead as suppressed (its number is on the do-not-call list). */
export async function suppressLead(db: Kysely<Database>, leadId: number, now: number): Promise<void> {
  await db
    .updateTable('leads')
    .set({ state: 'suppressed', state_reason: 'on the suppression list', next_due_at: null, updated_at: now })
    .where('id', '=', leadId)
    .where('state', 'in', DUE_LEAD_STATES_SQL)
    .execute();
}

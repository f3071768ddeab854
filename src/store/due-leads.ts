import type { Kysely } from 'kysely';
import { prepared } from './prepared.js';
import { DUE_LEAD_STATES_SQL, LIVE_ATTEMPT_STATES_SQL } from './state-lists.js';
import type { Database, LeadState } from './types.js';

// The hot queries of the scheduler. Both are served by the partial index leads_due
// (campaign_id, next_due_at, id) WHERE state IN ('pending', 'retry-scheduled'), so
// their cost stays logarithmic however many leads a campaign holds. (State lists are
// literals: see store/state-lists.ts.)

export interface DueLead {
  id: number;
  campaign_id: number;
  /** pending or retry-scheduled (the query's states). */
  state: LeadState;
  phone_number: string;
  /** The secondary number being worked; null at position 0 (the primary: `phone_number`). */
  contact_phone: string | null;
  contact_position: number;
  timezone: string | null;
  variables_json: string;
  next_due_at: number | null;
  /** The assistant variant it was given at its first claim (null before it, or without variants). */
  variant: string | null;
}

/** The columns of a DueLead (leads joined with its current contact), for every query that returns them. */
export const DUE_LEAD_COLUMNS = [
  'leads.id',
  'leads.campaign_id',
  'leads.state',
  'leads.phone_number',
  'lead_contacts.phone_number as contact_phone',
  'leads.contact_position',
  'leads.timezone',
  'leads.variables_json',
  'leads.next_due_at',
  'leads.variant',
] as const;

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
    .select(DUE_LEAD_COLUMNS)
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

/** Whether the campaign has any lead at all (a campaign without leads is not complete, only empty). */
export async function hasLeads(db: Kysely<Database>, campaignId: number): Promise<boolean> {
  const row = await db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Leads left `calling` without a live attempt (killed between two statements of an older
 * version, or an operator's edit) would never be dialled again: they are put back, due
 * now. Returns how many.
 */
export async function requeueOrphanedCallingLeads(db: Kysely<Database>, now: number, campaigns?: readonly number[]): Promise<number> {
  if (campaigns?.length === 0) return 0;
  const orphans = await db
    .updateTable('leads')
    .set({ state: 'retry-scheduled', next_due_at: now, updated_at: now, state_reason: 'recovered at start-up' })
    // Campaign by campaign through the (campaign_id, state) index, not a scan of every lead.
    .where('campaign_id', 'in', campaigns ? [...campaigns] : (eb) => eb.selectFrom('campaigns').select('campaigns.id'))
    .where('state', '=', 'calling')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('attempts')
            .select('attempts.id')
            .whereRef('attempts.lead_id', '=', 'leads.id')
            .where('attempts.state', 'in', LIVE_ATTEMPT_STATES_SQL),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(orphans.numUpdatedRows);
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

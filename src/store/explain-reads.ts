import type { Kysely } from 'kysely';
import { DUE_LEAD_STATES_SQL } from './state-lists.js';
import type { DaemonRow, Database, LeadRow, LeadState } from './types.js';

// What `explain` and `validate --preview` read: the leads of a number, their contacts,
// the newest daemon row, a lead's place in its campaign's queue, and a campaign's leads
// page by page. The facts the planner judges on (suppression list, attempt caps, live
// attempts) come from the same readers the engine uses.

/** Leads whose primary or secondary number is `phone`, in id order. */
export async function leadsWithNumber(db: Kysely<Database>, phone: string): Promise<LeadRow[]> {
  const direct = await db.selectFrom('leads').select('id').where('phone_number', '=', phone).execute();
  const viaContacts = await db.selectFrom('lead_contacts').select('lead_id as id').where('phone_number', '=', phone).execute();
  const ids = [...new Set([...direct, ...viaContacts].map((r) => r.id))];
  if (ids.length === 0) return [];
  return db.selectFrom('leads').selectAll().where('id', 'in', ids).orderBy('id').execute();
}

/** A lead's secondary numbers in order (positions 1, 2, …; the primary is the lead's own). */
export async function secondaryNumbers(db: Kysely<Database>, leadId: number): Promise<string[]> {
  const rows = await db.selectFrom('lead_contacts').select('phone_number').where('lead_id', '=', leadId).where('position', '>=', 1).orderBy('position').execute();
  return rows.map((r) => r.phone_number);
}

/** The daemon row with the newest heartbeat (the running daemon, or the last one that ran). */
export async function newestDaemonRow(db: Kysely<Database>): Promise<DaemonRow | undefined> {
  return db.selectFrom('daemons').selectAll().orderBy('heartbeat_at', 'desc').limit(1).executeTakeFirst();
}

/** Due leads of the campaign ahead of a lead due at `dueAt`: earlier, or as early with a smaller id (the due query's order). */
export async function leadsAheadInQueue(db: Kysely<Database>, campaignId: number, dueAt: number, leadId: number): Promise<number> {
  const row = await db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('campaign_id', '=', campaignId)
    .where('state', 'in', DUE_LEAD_STATES_SQL)
    .where((eb) => eb.or([eb('next_due_at', '<', dueAt), eb.and([eb('next_due_at', '=', dueAt), eb('id', '<', leadId)])]))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One lead as the preview judges it: the number being worked is `contact_phone` when not the primary. */
export interface PreviewLead {
  id: number;
  state: LeadState;
  phone_number: string;
  contact_phone: string | null;
  timezone: string | null;
  next_due_at: number | null;
}

/** Up to `limit` leads of the campaign with an id above `after`, in id order. */
export async function previewLeadsPage(db: Kysely<Database>, campaignId: number, after: number, limit: number): Promise<PreviewLead[]> {
  return db
    .selectFrom('leads')
    .leftJoin('lead_contacts', (j) => j.onRef('lead_contacts.lead_id', '=', 'leads.id').onRef('lead_contacts.position', '=', 'leads.contact_position'))
    .select(['leads.id', 'leads.state', 'leads.phone_number', 'lead_contacts.phone_number as contact_phone', 'leads.timezone', 'leads.next_due_at'])
    .where('leads.campaign_id', '=', campaignId)
    .where('leads.id', '>', after)
    .orderBy('leads.id')
    .limit(limit)
    .execute();
}

import type { Kysely } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { isPostgres } from './dialect.js';
import { prepared } from './prepared.js';
import type { CallResultRow } from './results-types.js';
import type { AttemptRow, Database, LeadRow } from './types.js';

// One lead as the API shows it (GET /leads/{id} and the lookups by external id or number):
// its row, its campaign's name, its secondary numbers, its attempts in order and the result
// of its latest call that has one; and the change of its variables (PATCH).

export interface LeadView {
  lead: LeadRow;
  campaign: string;
  secondary: string[];
  attempts: AttemptRow[];
  /** The result of the latest attempt that has one. */
  result: CallResultRow | null;
}

/** The lead with this id, or undefined. */
export async function leadView(db: Kysely<Database>, id: number): Promise<LeadView | undefined> {
  if (isPostgres(db)) return leadViewAtOnce(db, id);
  const [lead] = await viewQueries.lead.rows(db, { id });
  if (!lead) return undefined;
  const [[campaign], contacts, attempts, [result]] = await Promise.all([
    viewQueries.campaignName.rows(db, { id: lead.campaign_id }),
    viewQueries.contacts.rows(db, { id }),
    viewQueries.attempts.rows(db, { id }),
    viewQueries.result.rows(db, { id }),
  ]);
  if (!campaign) throw new Error(`lead ${id}: its campaign ${lead.campaign_id} is missing`);
  return { lead, campaign: campaign.name, secondary: contacts.map((c) => c.phone_number), attempts, result: result ?? null };
}

// `GET /leads/{id}` runs these five on every request: compiled once, not per request.
const viewQueries = {
  lead: prepared((db, v: { id: number }) => db.selectFrom('leads').selectAll().where('id', '=', v.id)),
  campaignName: prepared((db, v: { id: number }) => db.selectFrom('campaigns').select('name').where('id', '=', v.id)),
  contacts: prepared((db, v: { id: number }) => db.selectFrom('lead_contacts').select('phone_number').where('lead_id', '=', v.id).where('position', '>=', 1).orderBy('position')),
  attempts: prepared((db, v: { id: number }) => db.selectFrom('attempts').selectAll().where('lead_id', '=', v.id).orderBy('id')),
  result: prepared((db, v: { id: number }) => db.selectFrom('call_results').selectAll().where('lead_id', '=', v.id).orderBy('attempt_id', 'desc').limit(1)),
};

/**
 * PostgreSQL: the same view in ONE statement, its parts gathered by the server as JSON. As
 * five statements (the SQLite way, where a statement is a call in this thread) a GET took
 * two round trips and, for the second, four of the API's four connections at once: under a
 * CRM's load every GET held back the POSTs queued for a connection. One statement is also
 * one snapshot: the attempts and the result are read together. JSON carries every column as
 * the pool's parsers give it (int8 and float8 as numbers, text as strings).
 */
async function leadViewAtOnce(db: Kysely<Database>, id: number): Promise<LeadView | undefined> {
  const [row] = await viewAtOnce.rows(db, { id });
  if (!row) return undefined;
  const { view_campaign: campaign, view_secondary: secondary, view_attempts: attempts, view_result: result, ...lead } = row;
  if (campaign === null) throw new Error(`lead ${id}: its campaign ${lead.campaign_id} is missing`);
  return { lead, campaign, secondary: secondary.map((c) => c.phone_number), attempts, result };
}

const viewAtOnce = prepared((db, v: { id: number }) =>
  db
    .selectFrom('leads')
    .leftJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
    .selectAll('leads')
    .select((eb) => [
      eb.ref('campaigns.name').as('view_campaign'),
      jsonArrayFrom(eb.selectFrom('lead_contacts').select('lead_contacts.phone_number').whereRef('lead_contacts.lead_id', '=', 'leads.id').where('lead_contacts.position', '>=', 1).orderBy('lead_contacts.position')).as('view_secondary'),
      jsonArrayFrom(eb.selectFrom('attempts').selectAll('attempts').whereRef('attempts.lead_id', '=', 'leads.id').orderBy('attempts.id')).as('view_attempts'),
      jsonObjectFrom(eb.selectFrom('call_results').selectAll('call_results').whereRef('call_results.lead_id', '=', 'leads.id').orderBy('call_results.attempt_id', 'desc').limit(1)).as('view_result'),
    ])
    .where('leads.id', '=', v.id),
);

/** Ids of the campaign's leads with this external id (one at most) or this number (several when the campaign allows duplicates), oldest first. */
export async function leadIdsBy(db: Kysely<Database>, campaignId: number, by: { externalId: string } | { phoneNumber: string }): Promise<number[]> {
  let query = db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId);
  query = 'externalId' in by ? query.where('external_id', '=', by.externalId) : query.where('phone_number', '=', by.phoneNumber);
  const rows = await query.orderBy('id').limit(MAX_MATCHES).execute();
  return rows.map((r) => Number(r.id));
}

/** Leads one lookup returns at most. */
export const MAX_MATCHES = 100;

export type VariablesChange = { kind: 'not-found' } | { kind: 'live' } | { kind: 'changed'; variables: Record<string, string> };

/** Tries of a change that met a concurrent one (the variables moved between the read and the write). */
const CHANGE_ATTEMPTS = 5;

/**
 * Applies `change` to a lead's variables unless the lead is in a call (`calling`: the call
 * was placed with the variables it had). A compare-and-set on the stored JSON and the
 * state, so that neither a concurrent change nor a claim committed in between is lost; on
 * PostgreSQL the UPDATE waits for a claim's row lock and then sees `calling`.
 */
export async function changeLeadVariables(
  db: Kysely<Database>,
  id: number,
  change: (current: Record<string, string>) => Record<string, string>,
  now: number,
): Promise<VariablesChange> {
  for (let attempt = 1; ; attempt++) {
    const lead = await db.selectFrom('leads').select(['state', 'variables_json']).where('id', '=', id).executeTakeFirst();
    if (!lead) return { kind: 'not-found' };
    if (lead.state === 'calling') return { kind: 'live' };
    const variables = change(parseVariables(lead.variables_json));
    const result = await db
      .updateTable('leads')
      .set({ variables_json: JSON.stringify(variables), updated_at: now })
      .where('id', '=', id)
      .where('state', '<>', 'calling')
      .where('variables_json', '=', lead.variables_json)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return { kind: 'changed', variables };
    if (attempt >= CHANGE_ATTEMPTS) return { kind: 'live' };
  }
}

/** A lead's stored variables (a JSON object of strings); {} when unreadable. */
export function parseVariables(json: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(json);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, string>;
  } catch {
    // stored by campaignd itself: never expected
  }
  return {};
}

import { sql, type Kysely } from 'kysely';
import type { Database } from './types.js';

// The reads of `campaignd results`: leads in pages by id (keyset: each page a short read
// of its own, so an export of millions never holds one read transaction, nor the WAL,
// while the daemon writes), each with its last attempt and that attempt's result. Plain
// SQL that SQLite and PostgreSQL both run.

/** Which leads an export covers. */
export interface ExportScope {
  /** Campaign ids; undefined: every campaign. */
  campaignIds?: readonly number[];
  /** Only leads changed at or after this instant (epoch ms). */
  since?: number;
}

/**
 * A position in the feed of changed leads (the API's resumable results): leads ordered by
 * (changed_at, id), each lead at its last change. Strictly after `changedAt`/`leadId` and
 * changed at or before `until` (changes younger than that may still be committing).
 */
export interface ChangeCursor {
  changedAt: number;
  leadId: number;
}

/** A lead as exported. */
export interface ExportLeadRow {
  lead_id: number;
  /** The change feed only: the lead's last change, or its results' (a result recorded after the lead settled). */
  changed_at?: number;
  campaign_id: number;
  phone_number: string;
  state: string;
  state_reason: string | null;
  variables_json: string;
  /** The lead's assistant variant (migration 0018); null without variants or before its first call. */
  variant: string | null;
}

/** An attempt with its result. Transcript and evaluation only when asked for (JSONL). */
export interface ExportAttemptRow {
  id: number;
  lead_id: number;
  contact_position: number;
  phone_number: string;
  state: string;
  counted: number;
  outcome: string | null;
  call_id: string | null;
  call_status: string | null;
  answered_by: string | null;
  outcome_source: string | null;
  created_at: number;
  sent_at: number | null;
  ended_at: number | null;
  result_status: string | null;
  result_answered_by: string | null;
  duration_seconds: number | null;
  started_at: number | null;
  result_ended_at: number | null;
  cost: number | null;
  recording_url: string | null;
  extracted_json: string | null;
  transcript_json?: string | null;
  evaluation_json?: string | null;
  source: string | null;
  /** The callback this call asked for (README, "Callbacks the person asks for"): null when it asked for none. */
  callback_asked: string | null;
  /** 'scheduled', 'placed', 'refused' or 'dropped'. */
  callback_state: string | null;
  /** When the asked callback was due: the first allowed moment from the asked one (null when refused). */
  callback_due_at: number | null;
  callback_refused_reason: string | null;
  /** 1 when this call was a callback's own call (counted once it ended). */
  callback_call: number;
}

// Attempts never sent (withdrawn) or settled as never placed tried nobody.
const TRIED = sql`('dialing', 'placed', 'unknown', 'ended', 'rejected')`;

function scopeFilter(scope: ExportScope, alias: string) {
  const parts = [];
  if (scope.campaignIds) parts.push(sql`and ${sql.ref(`${alias}.campaign_id`)} in (${sql.join(scope.campaignIds.length > 0 ? [...scope.campaignIds] : [-1])})`);
  if (scope.since !== undefined) parts.push(sql`and ${sql.ref(`${alias}.updated_at`)} >= ${scope.since}`);
  return sql.join(parts, sql` `);
}

/** Up to `limit` leads of the scope with id > `after`, in id order. */
export async function exportLeadPage(db: Kysely<Database>, scope: ExportScope, after: number, limit: number, opts: { variants: boolean } = { variants: true }): Promise<ExportLeadRow[]> {
  // A database read before migration 0018 has no variant column: the column stays empty.
  const variant = opts.variants ? sql`l.variant` : sql`null`;
  const result = await sql<ExportLeadRow>`
    select l.id as lead_id, l.campaign_id, l.phone_number, l.state, l.state_reason, l.variables_json, ${variant} as variant
    from leads l
    where l.id > ${after} ${scopeFilter(scope, 'l')}
    order by l.id
    limit ${limit}`.execute(db);
  return result.rows;
}

/**
 * Up to `limit` leads of the scope changed after `after` and at or before `until`, in
 * (changed_at, id) order. A lead changes when its row does, and when a result of one of its
 * calls is recorded or revised (the service's report can come after the lead settled).
 * Only leads changed since the cursor's instant get their changed_at computed; the scan
 * itself is over the scope's leads (no index on updated_at: one would cost every write).
 */
export async function exportChangedLeadPage(
  db: Kysely<Database>,
  scope: ExportScope,
  after: ChangeCursor,
  until: number,
  limit: number,
  opts: { variants: boolean } = { variants: true },
): Promise<ExportLeadRow[]> {
  const variant = opts.variants ? sql`l.variant` : sql`null`;
  const result = await sql<ExportLeadRow>`
    select x.* from (
      select l.id as lead_id, l.campaign_id, l.phone_number, l.state, l.state_reason, l.variables_json, ${variant} as variant,
        coalesce((select max(r.updated_at) from call_results r where r.lead_id = l.id and r.updated_at > l.updated_at), l.updated_at) as changed_at
      from leads l
      where (l.updated_at >= ${after.changedAt} or l.id in (select r.lead_id from call_results r where r.updated_at >= ${after.changedAt})) ${scopeFilter(scope, 'l')}
    ) x
    where (x.changed_at > ${after.changedAt} or (x.changed_at = ${after.changedAt} and x.lead_id > ${after.leadId}))
      and x.changed_at <= ${until}
    order by x.changed_at, x.lead_id
    limit ${limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, changed_at: Number(r.changed_at), lead_id: Number(r.lead_id) }));
}

/**
 * Every tried attempt of the leads with ids in [first, last], with its result, by lead then
 * attempt: one range of the attempts_lead index per page of leads (a merge in the caller,
 * instead of two correlated subqueries per lead: 3x faster at a million leads).
 */
export async function exportAttemptsOf(
  db: Kysely<Database>,
  first: number,
  last: number,
  opts: { texts: boolean; campaignIds?: readonly number[]; leadIds?: readonly number[]; callbacks?: boolean },
): Promise<ExportAttemptRow[]> {
  // The callback a call asked for: by the unique attempt_id. Whether it was a callback's call:
  // the lead's callbacks through callbacks_lead. A database before migration 0020 has neither.
  const callbacks = opts.callbacks
    ? sql`, c.asked as callback_asked, c.state as callback_state, c.due_at as callback_due_at, c.refused_reason as callback_refused_reason,
      case when exists (select 1 from callbacks p where p.lead_id = a.lead_id and p.placed_attempt_id = a.id) then 1 else 0 end as callback_call`
    : sql`, null as callback_asked, null as callback_state, null as callback_due_at, null as callback_refused_reason, 0 as callback_call`;
  const callbackJoin = opts.callbacks ? sql`left join callbacks c on c.attempt_id = a.id` : sql``;
  const texts = opts.texts ? sql`, r.transcript_json, r.evaluation_json` : sql``;
  // A page of the change feed is not a contiguous id range: only its own leads.
  const only = opts.leadIds ? sql`and a.lead_id in (${sql.join([...opts.leadIds])})` : sql``;
  const campaigns = opts.campaignIds ? sql`and a.campaign_id in (${sql.join(opts.campaignIds.length > 0 ? [...opts.campaignIds] : [-1])})` : sql``;
  const result = await sql<ExportAttemptRow>`
    select a.id, a.lead_id, a.contact_position, a.phone_number, a.state, a.counted, a.outcome, a.call_id, a.call_status, a.answered_by,
      a.outcome_source, a.created_at, a.sent_at, a.ended_at,
      r.status as result_status, r.answered_by as result_answered_by, r.duration_seconds, r.started_at,
      r.ended_at as result_ended_at, r.cost, r.recording_url, r.extracted_json, r.source ${texts} ${callbacks}
    from attempts a
    left join call_results r on r.attempt_id = a.id
    ${callbackJoin}
    where a.lead_id >= ${first} and a.lead_id <= ${last} and a.state in ${TRIED} ${campaigns} ${only}
    order by a.lead_id, a.id`.execute(db);
  return result.rows;
}

/** Lead variables JSON of the scope, a page at a time (the first pass, for the column names). */
export async function variablesPage(db: Kysely<Database>, scope: ExportScope, after: number, limit: number): Promise<{ id: number; variables_json: string }[]> {
  const result = await sql<{ id: number; variables_json: string }>`
    select l.id, l.variables_json from leads l
    where l.id > ${after} and l.variables_json <> '{}' ${scopeFilter(scope, 'l')}
    order by l.id limit ${limit}`.execute(db);
  return result.rows;
}

/** Extracted-variables JSON of the campaigns' results, a page at a time. */
export async function extractedPage(db: Kysely<Database>, campaignIds: readonly number[] | undefined, after: number, limit: number): Promise<{ attempt_id: number; extracted_json: string }[]> {
  const scope = campaignIds ? sql`and r.campaign_id in (${sql.join(campaignIds.length > 0 ? [...campaignIds] : [-1])})` : sql``;
  const result = await sql<{ attempt_id: number; extracted_json: string }>`
    select r.attempt_id, r.extracted_json from call_results r
    where r.attempt_id > ${after} and r.extracted_json is not null ${scope}
    order by r.attempt_id limit ${limit}`.execute(db);
  return result.rows;
}

/** Campaign ids and names (all, or the one named). */
export async function exportCampaigns(db: Kysely<Database>, name?: string): Promise<{ id: number; name: string }[]> {
  let q = db.selectFrom('campaigns').select(['id', 'name']).orderBy('id');
  if (name !== undefined) q = q.where('name', '=', name);
  return q.execute();
}

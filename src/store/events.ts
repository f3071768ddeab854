import type { Kysely } from 'kysely';
import type { Database, EventRow } from './types.js';

// An append-only log of what happened to campaigns, leads and attempts, for `explain`
// and for people reading the database after the fact. Never read by the dialing logic.

/** What to record; `data` is stored as JSON. */
export interface NewEvent {
  at: number;
  campaignId?: number | null;
  leadId?: number | null;
  attemptId?: number | null;
  kind: string;
  data?: unknown;
}

/** Appends one event; returns its id. */
export async function recordEvent(db: Kysely<Database>, e: NewEvent): Promise<number> {
  const row = await db
    .insertInto('events')
    .values({
      at: e.at,
      campaign_id: e.campaignId ?? null,
      lead_id: e.leadId ?? null,
      attempt_id: e.attemptId ?? null,
      kind: e.kind,
      data_json: e.data === undefined ? null : JSON.stringify(e.data),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The newest events of one lead, newest first. */
export async function listLeadEvents(db: Kysely<Database>, leadId: number, limit = 50): Promise<EventRow[]> {
  return db.selectFrom('events').selectAll().where('lead_id', '=', leadId).orderBy('id', 'desc').limit(limit).execute();
}

/** The newest events of one campaign, newest first. */
export async function listCampaignEvents(db: Kysely<Database>, campaignId: number, limit = 50): Promise<EventRow[]> {
  return db.selectFrom('events').selectAll().where('campaign_id', '=', campaignId).orderBy('id', 'desc').limit(limit).execute();
}

/** The data of a campaign's newest event of `kind` (null: no such event, or one without data). */
export async function lastCampaignEventData(db: Kysely<Database>, campaignId: number, kind: string): Promise<string | null> {
  const row = await db.selectFrom('events').select('data_json').where('campaign_id', '=', campaignId).where('kind', '=', kind).orderBy('id', 'desc').executeTakeFirst();
  return row?.data_json ?? null;
}

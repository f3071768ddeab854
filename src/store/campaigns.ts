import type { Kysely } from 'kysely';
import { prepared } from './prepared.js';
import { ACTIVE_LEAD_STATES, type CampaignRow, type CampaignState, type Database } from './types.js';

// The campaign table mirrors the campaign files. Files own the settings; the operator
// owns the state (`campaign pause` must survive a config reload), so an upsert never
// writes `state` of an existing row.

/**
 * What the campaign table keeps of a campaign file: the fields it has columns for. The whole
 * object given is stored as config_json (status and explain read it with the daemon down);
 * the store treats it as plain data (config/ defines its full shape).
 */
export interface CampaignFileFields {
  name: string;
  file: string;
  assistantId: number;
  maxCallsInParallel: number;
  initialStatus: 'running' | 'paused';
  leads: { remoteCampaignId?: number };
}

/** Inserts a campaign from its file, or refreshes its settings while keeping its state. */
export async function upsertCampaign(
  db: Kysely<Database>,
  cfg: CampaignFileFields,
  resolved: { timezone: string | null },
  now: number,
): Promise<CampaignRow> {
  const settings = {
    assistant_id: cfg.assistantId,
    timezone: resolved.timezone,
    max_calls_in_parallel: cfg.maxCallsInParallel,
    remote_campaign_id: cfg.leads.remoteCampaignId ?? null,
    config_json: JSON.stringify(cfg),
    config_file: cfg.file,
    updated_at: now,
  };
  return db
    .insertInto('campaigns')
    .values({ name: cfg.name, state: cfg.initialStatus, created_at: now, ...settings })
    .onConflict((oc) => oc.column('name').doUpdateSet(settings))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every campaign's id and name, by id. */
export async function campaignNames(db: Kysely<Database>): Promise<{ id: number; name: string }[]> {
  return db.selectFrom('campaigns').select(['id', 'name']).orderBy('id').execute();
}

/** Whether the database answers a read: throws when it does not (the daemon's readiness check). */
export async function probeCampaigns(db: Kysely<Database>): Promise<void> {
  await db.selectFrom('campaigns').select('id').limit(1).execute();
}

/** The campaign named `name`, if any. */
export async function getCampaignByName(db: Kysely<Database>, name: string): Promise<CampaignRow | undefined> {
  return (await byNameQuery.rows(db, { name }))[0];
}

// Every API request on a campaign by name looks it up: compiled once, not per request.
const byNameQuery = prepared((db, v: { name: string }) => db.selectFrom('campaigns').selectAll().where('name', '=', v.name));

/** The campaign with this id, if any. */
export async function getCampaignById(db: Kysely<Database>, id: number): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every campaign, by name. */
export async function listCampaigns(db: Kysely<Database>): Promise<CampaignRow[]> {
  return db.selectFrom('campaigns').selectAll().orderBy('name').execute();
}

/** Sets the operator state; returns the updated row, or undefined for an unknown name. */
export async function setCampaignState(db: Kysely<Database>, name: string, state: CampaignState, now: number): Promise<CampaignRow | undefined> {
  return db
    .updateTable('campaigns')
    .set({ state, updated_at: now, completed_at: state === 'completed' ? now : null })
    .where('name', '=', name)
    .returningAll()
    .executeTakeFirst();
}

/** Records (or clears, with null) the problem that keeps a campaign from running. */
export async function setCampaignProblem(db: Kysely<Database>, id: number, problem: string | null, now: number): Promise<void> {
  await db.updateTable('campaigns').set({ problem, updated_at: now }).where('id', '=', id).execute();
}

/** Every campaign, by id, as the engine loads them. */
export async function listCampaignsById(db: Kysely<Database>): Promise<CampaignRow[]> {
  return db.selectFrom('campaigns').selectAll().orderBy('id').execute();
}

/** What the engine watches to notice a change made by another command (state, edits, problems), by id. */
export async function campaignControlRows(db: Kysely<Database>): Promise<Pick<CampaignRow, 'id' | 'state' | 'updated_at' | 'problem'>[]> {
  return db.selectFrom('campaigns').select(['id', 'state', 'updated_at', 'problem']).orderBy('id').execute();
}

/** Sets the state of the campaign with this id (as a linked service campaign asks), leaving completed_at as it is. */
export async function setCampaignStateById(db: Kysely<Database>, id: number, state: CampaignState, now: number): Promise<void> {
  await db.updateTable('campaigns').set({ state, updated_at: now }).where('id', '=', id).execute();
}

/** A completed campaign that got new leads runs again; nothing happens to one in any other state. */
export async function reopenCompletedCampaign(db: Kysely<Database>, id: number, now: number): Promise<void> {
  await db.updateTable('campaigns').set({ state: 'running', completed_at: null, updated_at: now }).where('id', '=', id).where('state', '=', 'completed').execute();
}

/**
 * A running campaign whose every lead is final becomes completed; nothing happens to one in
 * any other state, or while a lead is still active. True when it was completed.
 */
export async function completeRunningCampaign(db: Kysely<Database>, id: number, now: number): Promise<boolean> {
  const res = await db
    .updateTable('campaigns')
    .set({ state: 'completed', completed_at: now, updated_at: now })
    .where('id', '=', id)
    .where('state', '=', 'running')
    // Checked again by this statement: the caller's checks are separate reads, and a commit
    // between them (a poll turning a webhook "success" into a voicemail to retry) would
    // complete a campaign with a lead still to call. Seen on PostgreSQL, where a read
    // takes a round trip and the poller's commit lands in between.
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('leads').select('leads.id').whereRef('leads.campaign_id', '=', 'campaigns.id').where('leads.state', 'in', [...ACTIVE_LEAD_STATES]))),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * The default_country of the campaigns in the store (as last loaded from their files),
 * upper-cased, each once, in campaign-name order: the countries their national numbers
 * were read in.
 */
export async function campaignDefaultCountries(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('campaigns').select('config_json').orderBy('name').execute();
  // config_json is the campaign file as config/ normalised it; only this field is read here.
  const countries = rows.map((r) => (JSON.parse(r.config_json) as { defaultCountry?: string }).defaultCountry?.trim().toUpperCase()).filter((c): c is string => !!c);
  return [...new Set(countries)];
}

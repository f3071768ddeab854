import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { anyText, keyParts } from './key-lists.js';
import type { Database } from './types.js';

// The lead import's reads and updates of leads already stored (src/leads/import.ts decides,
// this module asks and writes). New leads are written by lead-batch.ts.

/** Ids per `in (…)` list: a whole batch of an import in one statement, under SQLite's 32,766 parameters. */
const ID_CHUNK = 10_000;

/**
 * What the database held when the import began. A first import into an empty campaign
 * (the million-row case) can skip looking up every key: within one import the keys are
 * unique already (numbers are deduplicated in memory, `file:line` keys are unique).
 */
export interface ImportPrior {
  campaignHasLeads: boolean;
  /** Invalid rows of this file were stored before, so fixed rows may replace them. */
  invalidFromFile: boolean;
  anySuppressions: boolean;
}

export async function readImportPrior(db: Kysely<Database>, campaignId: number, sourceFile: string): Promise<ImportPrior> {
  const anyLead = await db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).limit(1).executeTakeFirst();
  const anyInvalid = anyLead
    ? await db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).where('state', '=', 'invalid').where('source_file', '=', sourceFile).limit(1).executeTakeFirst()
    : undefined;
  const anySuppression = await db.selectFrom('suppressions').select('phone_number').limit(1).executeTakeFirst();
  return { campaignHasLeads: !!anyLead, invalidFromFile: !!anyInvalid, anySuppressions: !!anySuppression };
}

/** A stored lead as the import compares it with its row. */
export interface StoredLead {
  id: number;
  dedupe_key: string;
  phone_number: string;
  state: string;
  variables_json: string;
  timezone: string | null;
  external_id: string | null;
}

const STORED_LEAD = ['id', 'dedupe_key', 'phone_number', 'state', 'variables_json', 'timezone', 'external_id'] as const;

/** The campaign's leads with these dedupe keys, by key (each row as read: no copy per lead, a re-import looks up every row). */
export async function leadsByDedupeKey(db: Kysely<Database>, campaignId: number, keys: readonly string[]): Promise<Map<string, StoredLead>> {
  const found = new Map<string, StoredLead>();
  for (const part of keyParts(db, keys)) {
    const query = db.selectFrom('leads').select(STORED_LEAD).where('campaign_id', '=', campaignId);
    const rows = await (isPostgres(db) ? query.where('dedupe_key', '=', anyText(part)) : query.where('dedupe_key', 'in', part)).execute();
    for (const lead of rows) found.set(lead.dedupe_key, lead);
  }
  return found;
}

/** The campaign's leads with these external ids (API leads), by external id. */
export async function leadsByExternalId(db: Kysely<Database>, campaignId: number, externalIds: readonly string[]): Promise<Map<string, StoredLead>> {
  const found = new Map<string, StoredLead>();
  for (const part of keyParts(db, externalIds)) {
    const query = db.selectFrom('leads').select(STORED_LEAD).where('campaign_id', '=', campaignId);
    const rows = await (isPostgres(db) ? query.where('external_id', '=', anyText(part)) : query.where('external_id', 'in', part)).execute();
    for (const lead of rows) found.set(lead.external_id!, lead);
  }
  return found;
}

/**
 * What an API item changes of a lead not yet called besides its variables, timezone and
 * secondary numbers: its number (and so its dedupe key), its state (an invalid lead fixed,
 * or a new number on the suppression list) and its external id (a lead from a file that a
 * caller now names).
 */
export interface LeadIdentity {
  phoneNumber: string;
  dedupeKey: string;
  externalId: string | null;
  state: 'pending' | 'suppressed';
  stateReason: string | null;
  nextDueAt: number | null;
}

/** Sets a lead's number, dedupe key, state and external id (an API item's update; refreshPendingLead does the rest). */
export async function setLeadIdentity(db: Kysely<Database>, leadId: number, identity: LeadIdentity, now: number): Promise<void> {
  await db
    .updateTable('leads')
    .set({
      phone_number: identity.phoneNumber,
      dedupe_key: identity.dedupeKey,
      external_id: identity.externalId,
      state: identity.state,
      state_reason: identity.stateReason,
      next_due_at: identity.nextDueAt,
      updated_at: now,
    })
    .where('id', '=', leadId)
    .execute();
}

/** Deletes leads by id (an import's placeholders of rows that were invalid and are fixed now). */
export async function deleteLeadsById(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += ID_CHUNK) await db.deleteFrom('leads').where('id', 'in', ids.slice(i, i + ID_CHUNK)).execute();
}

/** The secondary numbers (positions 1..) of these leads, in order, by lead id; leads without any are absent. */
export async function secondaryNumbersOf(db: Kysely<Database>, leadIds: readonly number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (let i = 0; i < leadIds.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('lead_contacts')
      .select(['lead_id', 'position', 'phone_number'])
      .where('lead_id', 'in', leadIds.slice(i, i + ID_CHUNK))
      .where('position', '>=', 1)
      .orderBy('lead_id')
      .orderBy('position')
      .execute();
    for (const c of rows) {
      const list = out.get(c.lead_id);
      if (list) list.push(c.phone_number);
      else out.set(c.lead_id, [c.phone_number]);
    }
  }
  return out;
}

/**
 * Gives a pending lead the variables and timezone of its row, and, when `secondary` is
 * given, replaces its secondary numbers (positions 1..) with those.
 */
export async function refreshPendingLead(
  db: Kysely<Database>,
  leadId: number,
  fields: { variablesJson: string; timezone: string | null; secondary?: readonly string[] },
  now: number,
): Promise<void> {
  await db.updateTable('leads').set({ variables_json: fields.variablesJson, timezone: fields.timezone, updated_at: now }).where('id', '=', leadId).execute();
  if (!fields.secondary) return;
  await db.deleteFrom('lead_contacts').where('lead_id', '=', leadId).where('position', '>=', 1).execute();
  if (fields.secondary.length > 0) {
    await db
      .insertInto('lead_contacts')
      .values(fields.secondary.map((phone_number, i) => ({ lead_id: leadId, position: i + 1, phone_number })))
      .execute();
  }
}

/** Names a lead by the caller's id (a stored lead a caller posts again under its own id). */
export async function setExternalId(db: Kysely<Database>, leadId: number, externalId: string, now: number): Promise<void> {
  await db.updateTable('leads').set({ external_id: externalId, updated_at: now }).where('id', '=', leadId).execute();
}

import type { Kysely } from 'kysely';
import type { Database } from './types.js';

// The lead import's reads and updates of leads already stored (src/leads/import.ts decides,
// this module asks and writes). New leads are written by lead-batch.ts.

/** Dedupe keys per lookup. */
const KEY_CHUNK = 1024;
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
  state: string;
  variables_json: string;
  timezone: string | null;
}

/** The campaign's leads with these dedupe keys, by key (each row as read: no copy per lead, a re-import looks up every row). */
export async function leadsByDedupeKey(db: Kysely<Database>, campaignId: number, keys: readonly string[]): Promise<Map<string, StoredLead>> {
  const found = new Map<string, StoredLead>();
  for (let i = 0; i < keys.length; i += KEY_CHUNK) {
    const rows = await db
      .selectFrom('leads')
      .select(['id', 'dedupe_key', 'state', 'variables_json', 'timezone'])
      .where('campaign_id', '=', campaignId)
      .where('dedupe_key', 'in', keys.slice(i, i + KEY_CHUNK))
      .execute();
    for (const lead of rows) found.set(lead.dedupe_key, lead);
  }
  return found;
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

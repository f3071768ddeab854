import type { Kysely } from 'kysely';
import { BulkInserter } from './bulk-insert.js';
import type { StagedLead } from './lead-copy.js';
import type { Database } from './types.js';

// New leads by multi-row INSERT (bulk-insert.ts): the import's writer on SQLite, and on
// PostgreSQL for a handle without a raw client (lead-batch.ts picks; COPY is lead-copy.ts).

// Rows per INSERT statement: 13 columns x 1024 rows stays under SQLite's and
// PostgreSQL's parameter limits (32,766 and 65,535).
const INSERT_CHUNK = 1024;

const LEAD_COLUMNS = [
  'campaign_id',
  'dedupe_key',
  'phone_number',
  'variables_json',
  'timezone',
  'state',
  'state_reason',
  'next_due_at',
  'source_file',
  'source_line',
  'created_at',
  'updated_at',
  'external_id',
] as const;

/** The two multi-row inserts of an import, compiled once per import. */
export interface LeadInserts {
  leads: BulkInserter<'leads'>;
  contacts: BulkInserter<'lead_contacts'>;
}

export function leadInserts(): LeadInserts {
  return {
    leads: new BulkInserter('leads', LEAD_COLUMNS, ['id', 'dedupe_key']),
    contacts: new BulkInserter('lead_contacts', ['lead_id', 'position', 'phone_number']),
  };
}

/** Inserts the new leads of one batch and their secondary numbers, in the caller's transaction; returns their ids in the leads' order. */
export async function insertNewLeads(
  db: Kysely<Database>,
  inserts: LeadInserts,
  leads: readonly StagedLead[],
  fields: { campaignId: number; sourceFile: string; now: number },
): Promise<number[]> {
  const { campaignId, sourceFile, now } = fields;
  const contacts = new Map<string, readonly string[]>();
  const values: unknown[] = [];
  for (const l of leads) {
    if (l.contacts && l.contacts.length > 0) contacts.set(l.dedupeKey, l.contacts);
    values.push(campaignId, l.dedupeKey, l.phoneNumber, l.variablesJson, l.timezone, l.state, l.stateReason, l.nextDueAt, sourceFile, l.sourceLine, now, now, l.externalId);
  }
  const inserted = await inserts.leads.insertAll<{ id: number; dedupe_key: string }>(db, values, INSERT_CHUNK);
  const contactValues: unknown[] = [];
  for (const { id, dedupe_key } of inserted) {
    const numbers = contacts.get(dedupe_key);
    if (!numbers) continue;
    for (let i = 0; i < numbers.length; i++) contactValues.push(id, i + 1, numbers[i]);
  }
  await inserts.contacts.insertAll(db, contactValues, INSERT_CHUNK);
  // A batch's dedupe keys are unique (the campaign's index says so), so they name the ids.
  const idOf = new Map(inserted.map((r) => [r.dedupe_key, Number(r.id)]));
  return leads.map((l) => idOf.get(l.dedupeKey)!);
}

import type { Kysely } from 'kysely';
import type { Database, LeadState } from './types.js';

// The rows a pass over the service's leads writes (leads/remote-sync.ts decides what): a
// remote lead is keyed by `remote:<service id>`, its secondary numbers are lead_contacts
// rows, and a lead not yet called takes the service's changed variables. Stored leads are
// looked up and refreshed as imports do (store/lead-import.ts).

/** A lead read from the service, as stored. */
export interface NewRemoteLead {
  campaignId: number;
  dedupeKey: string;
  phoneNumber: string;
  variablesJson: string;
  state: LeadState;
  reason: string | null;
  remoteLeadId: number;
}

/** Stores a new remote lead (due now when pending); returns its id. */
export async function insertRemoteLead(db: Kysely<Database>, lead: NewRemoteLead, now: number): Promise<number> {
  const row = await db
    .insertInto('leads')
    .values({
      campaign_id: lead.campaignId,
      dedupe_key: lead.dedupeKey,
      phone_number: lead.phoneNumber,
      variables_json: lead.variablesJson,
      timezone: null,
      state: lead.state,
      state_reason: lead.reason,
      next_due_at: lead.state === 'pending' ? now : null,
      remote_lead_id: lead.remoteLeadId,
      source_file: null,
      source_line: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A lead's secondary numbers (positions 1..; the primary is the lead's own number). */
export async function insertLeadContacts(
  db: Kysely<Database>,
  contacts: readonly { lead_id: number; position: number; phone_number: string; remote_lead_id: number }[],
): Promise<void> {
  if (contacts.length > 0) await db.insertInto('lead_contacts').values([...contacts]).execute();
}

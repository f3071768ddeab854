import type { Kysely } from 'kysely';
import type { Lead } from '../service/schema/records.js';
import type { ListLeadsQuery } from '../service/schema/requests.js';
import { leadsByDedupeKey, refreshPendingLead } from '../store/lead-import.js';
import { REFRESH_AFTER_ROWS, refreshStatistics } from '../store/planner-statistics.js';
import { insertLeadContacts, insertRemoteLead } from '../store/remote-leads.js';
import { suppressedAmong } from '../store/suppressions.js';
import type { Database, LeadState } from '../store/types.js';
import { normalisePhone } from './phone.js';

// `leads.remote_campaign_id`: the campaign's leads live in the service. One pass pages
// through GET /api/user/leads and stores what is new; the daemon repeats the pass
// periodically to pick up leads added later. Idempotent: a remote lead is keyed by its
// service id (`remote:ID`), so a second pass adds nothing twice, and, as with CSV
// imports, changed variables update only leads not yet called.
//
// The service's own lead status decides the starting state: leads it already finished
// are stored final so that campaignd never calls them again; `blacklisted` is treated
// as the do-not-call list.

/** The one client method this needs (ServiceClient satisfies it). */
export interface RemoteLeadSource {
  iterateLeads(query?: ListLeadsQuery): AsyncIterable<Lead>;
}

export interface RemoteCampaign {
  id: number;
  remoteCampaignId: number;
  defaultCountry?: string;
}

/** What one pass did. */
export interface RemoteSyncSummary {
  /** Leads the service returned for this campaign. */
  seen: number;
  added: number;
  updated: number;
  unchanged: number;
  /** Of the added, those stored invalid (bad number). */
  invalid: number;
  /** Leads of other campaigns the service returned anyway (its filter is undocumented). */
  ignored: number;
}

const PAGE = 100;
const FINAL_REMOTE: Record<string, LeadState> = {
  completed: 'completed',
  'reached-max-retries': 'reached-max-retries',
  blacklisted: 'suppressed',
};

/** Pages through the service's leads of one campaign and stores new ones (with secondary contacts). */
export async function syncRemoteLeads(db: Kysely<Database>, client: RemoteLeadSource, campaign: RemoteCampaign, now: number): Promise<RemoteSyncSummary> {
  const summary: RemoteSyncSummary = { seen: 0, added: 0, updated: 0, unchanged: 0, invalid: 0, ignored: 0 };
  let page: Lead[] = [];
  const seenIds = new Set<number>();
  for await (const lead of client.iterateLeads({ campaign_id: campaign.remoteCampaignId, per_page: PAGE })) {
    const owner = lead.campaign_id ?? lead.campaign?.id;
    if (owner !== undefined && owner !== null && Number(owner) !== campaign.remoteCampaignId) {
      summary.ignored++;
      continue;
    }
    // Pages can shift while we read them (new leads push old ones down): skip repeats.
    if (seenIds.has(Number(lead.id))) continue;
    seenIds.add(Number(lead.id));
    summary.seen++;
    page.push(lead);
    if (page.length >= PAGE) {
      await storePage(db, campaign, page, now, summary);
      page = [];
    }
  }
  if (page.length > 0) await storePage(db, campaign, page, now, summary);
  if (summary.added >= REFRESH_AFTER_ROWS) await refreshStatistics(db, ['leads', 'lead_contacts']);
  return summary;
}

async function storePage(db: Kysely<Database>, campaign: RemoteCampaign, leads: Lead[], now: number, summary: RemoteSyncSummary): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const keys = leads.map((l) => `remote:${l.id}`);
    const existing = await leadsByDedupeKey(trx, campaign.id, keys);
    const fresh = leads.filter((l) => !existing.has(`remote:${l.id}`));
    const numbers = fresh.map((l) => normalisePhone(l.phone_number, campaign.defaultCountry));
    const dnc = await suppressedAmong(trx, numbers.flatMap((n) => (n.ok ? [n.e164] : [])));

    for (const [i, lead] of fresh.entries()) {
      const phone = numbers[i]!;
      const remoteFinal = FINAL_REMOTE[lead.status ?? ''];
      let state: LeadState = 'pending';
      let reason: string | null = null;
      if (!phone.ok) [state, reason] = ['invalid', phone.reason];
      else if (dnc.has(phone.e164)) [state, reason] = ['suppressed', 'on the suppression list'];
      else if (remoteFinal) [state, reason] = [remoteFinal, `status "${lead.status}" on the service`];
      const leadId = await insertRemoteLead(
        trx,
        {
          campaignId: campaign.id,
          dedupeKey: `remote:${lead.id}`,
          phoneNumber: phone.ok ? phone.e164 : lead.phone_number,
          variablesJson: JSON.stringify(stringVariables(lead.variables)),
          state,
          reason,
          remoteLeadId: Number(lead.id),
        },
        now,
      );
      summary.added++;
      if (state === 'invalid') {
        summary.invalid++;
        continue;
      }
      // The secondary numbers only (positions 1..): the primary is the lead's own number.
      const seenNumbers = [phone.ok ? phone.e164 : lead.phone_number];
      const contacts: { lead_id: number; position: number; phone_number: string; remote_lead_id: number }[] = [];
      for (const secondary of lead.secondary_contacts) {
        const s = normalisePhone(secondary.phone_number, campaign.defaultCountry);
        // A bad or repeated secondary is skipped, as in CSV imports.
        if (!s.ok || seenNumbers.includes(s.e164)) continue;
        seenNumbers.push(s.e164);
        contacts.push({ lead_id: leadId, position: seenNumbers.length - 1, phone_number: s.e164, remote_lead_id: Number(secondary.id) });
      }
      await insertLeadContacts(trx, contacts);
    }

    for (const lead of leads) {
      const stored = existing.get(`remote:${lead.id}`);
      if (!stored) continue;
      const variables = JSON.stringify(stringVariables(lead.variables));
      if (stored.state !== 'pending' || stored.variables_json === variables) {
        summary.unchanged++;
        continue;
      }
      await refreshPendingLead(trx, stored.id, { variablesJson: variables, timezone: stored.timezone }, now);
      summary.updated++;
    }
  });
}

/** The service's variables may hold numbers or booleans; make_call gets them back as text. */
function stringVariables(variables: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(variables)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

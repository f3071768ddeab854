import type { Transaction } from 'kysely';
import { addSuppressions, isSuppressed, suppressLeadsOfNumbers } from './suppressions.js';
import { reopenCompletedCampaign } from './campaigns.js';
import type { Database, LeadRow } from './types.js';

// The two on_result decisions that reach beyond the lead itself (README, "On the result").
// Both run inside the transaction that ended the attempt, so the lead's new state and
// what it causes elsewhere commit together or not at all: a crash can leave neither a
// moved lead without its copy in the target campaign, nor a copy whose source still calls.

type Trx = Transaction<Database>;

/** The number joins the suppression list; this lead and every lead waiting to call it end `suppressed`. */
export async function suppressByRule(trx: Trx, lead: LeadRow, phone: string, campaignName: string, reason: string, now: number): Promise<void> {
  await trx.updateTable('leads').set({ state: 'suppressed', state_reason: reason, next_due_at: null, updated_at: now }).where('id', '=', lead.id).execute();
  await addSuppressions(trx, [phone], `on_result:${campaignName}`, now);
  await suppressLeadsOfNumbers(trx, [phone], now);
}

export interface MoveRequest {
  /** Name of the campaign the lead continues in. */
  campaign: string;
  /** Name of the campaign the lead leaves. */
  from: string;
  /** The number that was called (it reached the person), the target lead's number. */
  phone: string;
  /** The call's extracted variables, added over the lead's own. */
  extracted: Record<string, unknown>;
  reason: string;
}

/**
 * Ends `lead` as `moved` and gives the target campaign its lead: a new one with the
 * variables of both, or, when the number is already a lead there, that one (a campaign
 * never calls one person twice; it is left as it is). False when the target campaign is
 * not in the store, and nothing was written.
 */
export async function moveLead(trx: Trx, lead: LeadRow, move: MoveRequest, now: number): Promise<boolean> {
  const target = await trx.selectFrom('campaigns').select(['id', 'name']).where('name', '=', move.campaign).executeTakeFirst();
  if (!target) return false;
  const existing = await trx
    .selectFrom('leads')
    .select('id')
    .where('campaign_id', '=', target.id)
    .where((eb) => eb.or([eb('phone_number', '=', move.phone), eb('dedupe_key', '=', move.phone)]))
    .executeTakeFirst();
  let targetId = existing?.id;
  if (targetId === undefined) {
    const suppressed = await isSuppressed(trx, move.phone);
    const variables = { ...parseVariables(lead.variables_json), ...move.extracted };
    const inserted = await trx
      .insertInto('leads')
      .values({
        campaign_id: target.id,
        // The key a re-import of the target's file gives this number: the file's row is the same lead.
        dedupe_key: move.phone,
        phone_number: move.phone,
        variables_json: JSON.stringify(variables),
        timezone: lead.timezone,
        state: suppressed ? 'suppressed' : 'pending',
        state_reason: suppressed ? 'on the suppression list' : null,
        next_due_at: suppressed ? null : now,
        source_file: `moved from campaign ${move.from}`,
        source_line: lead.id,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    targetId = inserted.id;
    if (!suppressed) await reopenCompletedCampaign(trx, target.id, now);
  }
  const reason = existing ? `${move.reason}; the number was already lead ${targetId} there, left as it is` : `${move.reason}; lead ${targetId} there`;
  await trx.updateTable('leads').set({ state: 'moved', state_reason: reason, next_due_at: null, updated_at: now }).where('id', '=', lead.id).execute();
  return true;
}

function parseVariables(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

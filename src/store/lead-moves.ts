import type { Transaction } from 'kysely';
import { addSuppressions, suppressLeadsOfNumbers } from './suppressions.js';
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
  const target = await moveTarget(trx, move.campaign, move.phone);
  if (!target) return false;
  let targetId = target.existing;
  if (targetId === null) {
    const { suppressed } = target;
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
  const reason = target.existing !== null ? `${move.reason}; the number was already lead ${targetId} there, left as it is` : `${move.reason}; lead ${targetId} there`;
  await trx.updateTable('leads').set({ state: 'moved', state_reason: reason, next_due_at: null, updated_at: now }).where('id', '=', lead.id).execute();
  return true;
}

/**
 * The target campaign, its lead with this number if it has one, and whether the number is
 * suppressed, in one statement: a move is decided inside the outcome's transaction, where on
 * PostgreSQL each statement is a round trip on the engine's one connection.
 */
async function moveTarget(trx: Trx, campaign: string, phone: string): Promise<{ id: number; existing: number | null; suppressed: boolean } | undefined> {
  const row = await trx
    .selectFrom('campaigns as c')
    .select((eb) => [
      'c.id',
      eb
        .selectFrom('leads as l')
        .select('l.id')
        .whereRef('l.campaign_id', '=', 'c.id')
        .where((w) => w.or([w('l.phone_number', '=', phone), w('l.dedupe_key', '=', phone)]))
        .orderBy('l.id')
        .limit(1)
        .as('existing'),
      eb.exists(eb.selectFrom('suppressions').select('phone_number').where('phone_number', '=', phone)).as('suppressed'),
    ])
    .where('c.name', '=', campaign)
    .executeTakeFirst();
  if (!row) return undefined;
  // SQLite answers EXISTS with 0 or 1, PostgreSQL with a boolean.
  return { id: Number(row.id), existing: row.existing === null ? null : Number(row.existing), suppressed: Boolean(Number(row.suppressed)) };
}

function parseVariables(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

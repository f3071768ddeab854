import type { Kysely } from 'kysely';
import { recordEvent } from './events.js';
import { LIVE_ATTEMPT_STATES_SQL } from './state-lists.js';
import { ACTIVE_LEAD_STATES, type Database, type LeadState } from './types.js';

// Cancelling a lead (the API's DELETE /leads/{id}): the lead becomes `cancelled`, final,
// in one conditional UPDATE. It races the dial loop's claim on the lead's row only, and
// each side changes the row only from the state it expects, so whichever commits first
// wins and the other sees it:
//   - cancelled first: the claim finds the lead no longer due and places no call;
//   - claimed first: the lead is `calling` when the cancel reaches it, and is cancelled
//     all the same. Its call is not cut: it goes ahead, its attempt ends and its result is
//     kept, and every transition after an outcome moves a lead only from `calling`
//     (lead-transitions.ts), so a cancelled lead is never put back to retry or completed.
// On PostgreSQL (read committed) the UPDATE waits for the claim's row lock and then
// judges the row as committed; on SQLite the one writer serialises the two.

export type CancelResult =
  | { kind: 'not-found' }
  /** The lead was final already (cancelled, completed, invalid…): nothing changed. */
  | { kind: 'already-final'; state: LeadState }
  /** Cancelled; no call was live. */
  | { kind: 'cancelled'; campaignId: number }
  /** Cancelled while a call was live: that call finishes and its result is kept. */
  | { kind: 'cancelled-live-call'; campaignId: number; attemptId: number; callId: string | null };

export interface CancelOptions {
  now: number;
  /** Kept as the lead's state_reason (default "cancelled"). */
  reason?: string;
}

/** Cancels a lead that is not final yet; see the header for how it meets a claim and a live call. */
export async function cancelLead(db: Kysely<Database>, leadId: number, opts: CancelOptions): Promise<CancelResult> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('leads')
      .set({ state: 'cancelled', state_reason: opts.reason ?? 'cancelled', next_due_at: null, updated_at: opts.now })
      .where('id', '=', leadId)
      .where('state', 'in', [...ACTIVE_LEAD_STATES])
      .returning(['campaign_id'])
      .executeTakeFirst();
    if (!updated) {
      const lead = await trx.selectFrom('leads').select('state').where('id', '=', leadId).executeTakeFirst();
      return lead ? { kind: 'already-final', state: lead.state } : { kind: 'not-found' };
    }
    const campaignId = Number(updated.campaign_id);
    // Read after the UPDATE: on PostgreSQL a claim that won the row is committed by now.
    const live = await trx
      .selectFrom('attempts')
      .select(['id', 'call_id'])
      .where('lead_id', '=', leadId)
      .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
      .executeTakeFirst();
    await recordEvent(trx, { at: opts.now, campaignId, leadId, attemptId: live?.id ?? null, kind: 'cancelled', data: { reason: opts.reason ?? null, live_call: live !== undefined } });
    return live ? { kind: 'cancelled-live-call', campaignId, attemptId: Number(live.id), callId: live.call_id } : { kind: 'cancelled', campaignId };
  });
}

/** Whether the lead is cancelled now (read before a call the pre-dial check approved). */
export async function isLeadCancelled(db: Kysely<Database>, leadId: number): Promise<boolean> {
  const row = await db.selectFrom('leads').select('state').where('id', '=', leadId).executeTakeFirst();
  return row?.state === 'cancelled';
}

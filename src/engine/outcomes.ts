import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { recordEvent } from '../store/events.js';
import { LIVE_ATTEMPT_STATES, type AttemptRow, type Database, type OutcomeSource } from '../store/types.js';
import { setCallId, transitionAttempt } from './attempts.js';
import { leadAfterOutcome, reviseCompletedLead } from './lead-transitions.js';
import { classifyCall } from './outcome.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// Applies what the service says about a call (webhook or call list) to its attempt and
// lead. Idempotent: duplicates, out-of-order deliveries and a webhook that beats the
// make_call answer all end in the same state.

export interface OutcomeContext {
  db: Kysely<Database>;
  logger: Logger;
  now: () => number;
  campaign: (id: number) => RuntimeCampaign | undefined;
  /** Called when a live slot was freed, so the scheduler refills it at once. */
  onSlotFreed: (campaignId: number) => void;
  /** Called for every final outcome (metrics). */
  onOutcome?: (campaign: string, outcomeClass: string) => void;
}

export interface CallObservation {
  callId: string | null;
  status: string;
  /** undefined when the source does not carry it at all (the webhook payload). */
  answeredBy: string | null | undefined;
  /** When the call ended, when known; else the observation time is used. */
  endedAt: number | null;
  source: Extract<OutcomeSource, 'webhook' | 'poll'>;
}

export type ObservationResult = 'progress' | 'ended' | 'confirmed' | 'revised' | 'ignored';

/** Applies one observation of a call to the attempt it belongs to. */
export async function observeCall(ctx: OutcomeContext, attempt: AttemptRow, obs: CallObservation): Promise<ObservationResult> {
  const now = ctx.now();
  const cls = classifyCall(obs.status, obs.answeredBy);
  const live = (LIVE_ATTEMPT_STATES as readonly string[]).includes(attempt.state);

  if (!live) return confirmProvisional(ctx, attempt, obs, cls, now);

  if (obs.callId) await setCallId(ctx.db, attempt.id, obs.callId);
  if (cls === 'in-progress' || cls === 'unknown-status') {
    // The call exists: an unknown attempt is now known to be placed.
    if (attempt.state === 'unknown' || attempt.state === 'dialing') {
      await transitionAttempt(ctx.db, attempt.id, ['unknown'], 'placed', { settle_deadline: null, detail: 'found in the call list' });
    }
    return 'progress';
  }

  const campaign = ctx.campaign(attempt.campaign_id);
  if (!campaign) return 'ignored';
  const endedAt = obs.endedAt ?? now;
  // A webhook has no answered_by: its success stays provisional until a poll confirms it.
  const provisional = obs.source === 'webhook' && obs.answeredBy === undefined && cls === 'success';
  const ended = await ctx.db.transaction().execute(async (trx) => {
    const moved = await transitionAttempt(trx, attempt.id, LIVE_ATTEMPT_STATES, 'ended', {
      call_status: obs.status,
      answered_by: obs.answeredBy ?? null,
      outcome: cls,
      outcome_source: provisional ? 'webhook' : obs.source,
      ended_at: endedAt,
      settle_deadline: null,
    });
    if (!moved) return false;
    await leadAfterOutcome(trx, attempt, cls, campaign.config, endedAt, now);
    return true;
  });
  // The attempt row itself is the record of an ordinary end; events are kept for the
  // unusual (unknown, settled, stuck, recovered, rejected) so the table stays small.
  if (!ended) return 'ignored';
  ctx.logger.info({ attempt: attempt.id, campaign: campaign.name, status: obs.status, outcome: cls, source: obs.source }, 'call ended');
  ctx.onOutcome?.(campaign.name, cls);
  ctx.onSlotFreed(attempt.campaign_id);
  return 'ended';
}

async function confirmProvisional(
  ctx: OutcomeContext,
  attempt: AttemptRow,
  obs: CallObservation,
  cls: ReturnType<typeof classifyCall>,
  now: number,
): Promise<ObservationResult> {
  const provisional = attempt.state === 'ended' && attempt.outcome_source === 'webhook' && attempt.outcome === 'success';
  if (!provisional || obs.source !== 'poll' || obs.answeredBy === undefined) return 'ignored';
  if (cls === 'in-progress' || cls === 'unknown-status') return 'ignored';
  const campaign = ctx.campaign(attempt.campaign_id);
  if (cls !== 'voicemail' || !campaign) {
    await ctx.db
      .updateTable('attempts')
      .set({ outcome_source: 'poll', answered_by: obs.answeredBy ?? null })
      .where('id', '=', attempt.id)
      .execute();
    return 'confirmed';
  }
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('attempts')
      .set({ outcome: 'voicemail', outcome_source: 'poll', answered_by: obs.answeredBy ?? null })
      .where('id', '=', attempt.id)
      .execute();
    await reviseCompletedLead(trx, { ...attempt, outcome: 'voicemail' }, 'voicemail', campaign.config, now);
  });
  ctx.logger.info({ attempt: attempt.id }, 'webhook success was a voicemail; lead decided again');
  return 'revised';
}

/** Ends a call stuck in progress past the assistant's maximum duration: freed, not retried. */
export async function closeStuckAttempt(ctx: OutcomeContext, attempt: AttemptRow, reason: string): Promise<boolean> {
  const campaign = ctx.campaign(attempt.campaign_id);
  if (!campaign) return false;
  const now = ctx.now();
  const closed = await ctx.db.transaction().execute(async (trx) => {
    const moved = await transitionAttempt(trx, attempt.id, ['placed'], 'ended', {
      outcome: 'unknown',
      outcome_source: 'timeout',
      detail: reason,
      ended_at: now,
    });
    if (moved) await leadAfterOutcome(trx, attempt, 'unknown', campaign.config, now, now);
    return moved;
  });
  if (closed) {
    await recordEvent(ctx.db, { at: now, campaignId: attempt.campaign_id, leadId: attempt.lead_id, attemptId: attempt.id, kind: 'stuck-closed', data: { reason } });
    ctx.logger.warn({ attempt: attempt.id, reason }, 'call closed with unknown outcome');
    ctx.onOutcome?.(campaign.name, 'unknown');
    ctx.onSlotFreed(attempt.campaign_id);
  }
  return closed;
}

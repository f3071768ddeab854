import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '../log/logger.js';
import { recordEvent } from '../store/events.js';
import { callResultOf, mergeCallResult, parseStoredJson } from '../store/results.js';
import { readGivenCall, type GivenCall, type ReadResult } from '../results/given.js';
import type { GroupCommit } from '../store/group-commit.js';
import { LIVE_ATTEMPT_STATES, type AttemptRow, type Database, type OutcomeSource } from '../store/types.js';
import { finaliseUnconfirmed, getAttempt, markEnded, markProvisionalConfirmed, markProvisionalVoicemail, setCallId, transitionAttempt } from '../store/attempts.js';
import { leadAfterOutcome, reviseCompletedLead } from '../store/lead-transitions.js';
import { classifyCall } from './outcome.js';
import { retryDecider } from './retry-policy.js';
import { decidesByResult, decidesByRetries, leadDecider } from './lead-decider.js';
import type { CallFacts } from './result-rules.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// Applies what the service says about a call (webhook or call list) to its attempt and
// lead. Idempotent: duplicates, out-of-order deliveries and a webhook that beats the
// make_call answer all end in the same state.

type Trx = Transaction<Database>;

export interface OutcomeContext {
  db: Kysely<Database>;
  /** Where observations are written: transactions shared by the work of one event-loop turn. */
  commit: GroupCommit;
  logger: Logger;
  now: () => number;
  campaign: (id: number) => RuntimeCampaign | undefined;
  /** Called when a live slot was freed, so the scheduler refills it at once. */
  onSlotFreed: (campaignId: number) => void;
  /** Called for every final outcome (metrics). */
  onOutcome?: (campaign: string, outcomeClass: string) => void;
  /** How call results are kept (daemon config `results`); transcripts kept when absent. */
  results?: ResultsPolicy;
}

/** What of a call's results is stored, and how the service's zone-less times read. */
export interface ResultsPolicy {
  keepTranscripts: boolean;
  serverTimezone: string;
}

export interface CallObservation {
  callId: string | null;
  status: string;
  /** undefined when the source does not carry it at all (the webhook payload). */
  answeredBy: string | null | undefined;
  /** When the call ended, when known; else the observation time is used. */
  endedAt: number | null;
  source: Extract<OutcomeSource, 'webhook' | 'poll'>;
  /** What the source said of the call's results (transcript, recording…), as sent. */
  given?: GivenCall;
  /** `given` read once (a batch may apply the observation again). */
  read?: ReadResult;
}

export type ObservationResult = 'progress' | 'ended' | 'confirmed' | 'revised' | 'ignored';

/** What applying an observation did, for the announcements made after the commit. */
export interface AppliedObservation {
  result: ObservationResult;
  /** The final class given to the call, when it ended ('ended') or was decided again ('revised'). */
  cls?: ReturnType<typeof classifyCall>;
}

/**
 * Applies one observation of a call to the attempt it belongs to (its own group-committed
 * transaction); `background`: behind the work that places and frees slots (group-commit.ts).
 */
export async function observeCall(ctx: OutcomeContext, attempt: AttemptRow, obs: CallObservation, opts: { background?: boolean } = {}): Promise<ObservationResult> {
  const applied = await ctx.commit.run((trx) => applyObservation(trx, ctx, attempt, obs), { background: opts.background === true });
  announceObservation(ctx, attempt, obs, applied);
  return applied.result;
}

/**
 * The database part of an observation, inside the caller's transaction: conditional
 * updates only, so `attempt` may be a little stale and a batch may be run again.
 */
export async function applyObservation(trx: Trx, ctx: OutcomeContext, attempt: AttemptRow, obs: CallObservation): Promise<AppliedObservation> {
  const now = ctx.now();
  const cls = classifyCall(obs.status, obs.answeredBy);
  const live = (LIVE_ATTEMPT_STATES as readonly string[]).includes(attempt.state);
  // The call's results are kept once it ended, whatever the attempt made of the outcome
  // (a duplicate webhook or a listing after the webhook completes what the first said).
  if (obs.given && cls !== 'in-progress' && cls !== 'unknown-status') await keepResult(trx, ctx, attempt, obs, now);

  if (!live) return confirmProvisional(trx, ctx, attempt, obs, cls, now);

  if (obs.callId && attempt.call_id === null) await setCallId(trx, attempt.id, obs.callId);
  if (cls === 'in-progress' || cls === 'unknown-status') {
    // The call exists: an unknown attempt is now known to be placed.
    if (attempt.state === 'unknown') {
      await transitionAttempt(trx, attempt.id, ['unknown'], 'placed', { settle_deadline: null, detail: 'found in the call list' });
    }
    return { result: 'progress' };
  }

  const campaign = ctx.campaign(attempt.campaign_id);
  if (!campaign) return { result: 'ignored' };
  const endedAt = obs.endedAt ?? now;
  // A webhook has no answered_by: its success stays provisional until a poll confirms it.
  const provisional = obs.source === 'webhook' && obs.answeredBy === undefined && cls === 'success';
  const moved = await markEnded(trx, attempt.id, {
    callStatus: obs.status,
    answeredBy: obs.answeredBy ?? null,
    outcome: cls,
    source: provisional ? 'webhook' : obs.source,
    endedAt,
  });
  if (!moved) {
    // The row was read before this transaction and something ended it since: typically a
    // webhook's provisional success while this listing was in flight. What the listing
    // says (who answered) must still confirm or revise it, against the row as it is now.
    const current = await getAttempt(trx, attempt.id);
    if (current && !(LIVE_ATTEMPT_STATES as readonly string[]).includes(current.state)) return confirmProvisional(trx, ctx, current, obs, cls, now);
    return { result: 'ignored' };
  }
  // A provisional success is decided by the rules on the result once the call list says who answered.
  await leadAfterOutcome(trx, attempt, leadDecider(cls, campaign, attempt, provisional ? null : callFacts(obs), endedAt), now);
  return { result: 'ended', cls };
}

/** Stores what the service said of the call, inside the outcome's transaction. */
async function keepResult(trx: Trx, ctx: OutcomeContext, attempt: AttemptRow, obs: CallObservation, now: number): Promise<void> {
  obs.read ??= readGivenCall(obs.given!, ctx.results?.serverTimezone ?? 'UTC');
  await mergeCallResult(
    trx,
    { attemptId: attempt.id, campaignId: attempt.campaign_id, leadId: attempt.lead_id },
    obs.read.fields,
    // success_when is judged as the variables are stored, so status need not read them (migration 0035).
    { source: obs.source, now, keepTranscripts: ctx.results?.keepTranscripts ?? true, successWhen: ctx.campaign(attempt.campaign_id)?.config.successWhen },
  );
}

/** Logs, counts and frees the slot of an applied observation; call only after its commit. */
export function announceObservation(ctx: OutcomeContext, attempt: AttemptRow, obs: CallObservation, applied: AppliedObservation): void {
  const campaign = ctx.campaign(attempt.campaign_id);
  // Said once, after the commit: a field of the wrong type was left out, the outcome was not.
  for (const problem of obs.read?.problems ?? []) {
    ctx.logger.warn({ attempt: attempt.id, callId: obs.callId, source: obs.source }, `call result: ${problem}`);
  }
  if (applied.result === 'revised') {
    ctx.logger.info({ attempt: attempt.id }, 'webhook success was a voicemail; lead decided again');
    return;
  }
  // The attempt row itself is the record of an ordinary end; events are kept for the
  // unusual (unknown, settled, stuck, recovered, rejected) so the table stays small.
  if (applied.result !== 'ended' || !campaign || !applied.cls) return;
  ctx.logger.info({ attempt: attempt.id, campaign: campaign.name, status: obs.status, outcome: applied.cls, source: obs.source }, 'call ended');
  ctx.onOutcome?.(campaign.name, applied.cls);
  ctx.onSlotFreed(attempt.campaign_id);
}

async function confirmProvisional(
  trx: Trx,
  ctx: OutcomeContext,
  attempt: AttemptRow,
  obs: CallObservation,
  cls: ReturnType<typeof classifyCall>,
  now: number,
): Promise<AppliedObservation> {
  const provisional = attempt.state === 'ended' && attempt.outcome_source === 'webhook' && attempt.outcome === 'success';
  if (!provisional || obs.source !== 'poll' || obs.answeredBy === undefined) return { result: 'ignored' };
  if (cls === 'in-progress' || cls === 'unknown-status') return { result: 'ignored' };
  // Bound to its call, the call can never be taken for a later attempt to the same number.
  if (obs.callId && attempt.call_id === null) await setCallId(trx, attempt.id, obs.callId);
  const campaign = ctx.campaign(attempt.campaign_id);
  if (cls !== 'voicemail' || !campaign) {
    await markProvisionalConfirmed(trx, attempt.id, obs.answeredBy ?? null);
    // The success is final now: a rule on the result or a callback may still decide otherwise than "completed".
    // Unless the retry settings decide it again, as they did when the webhook ended it.
    if (campaign && decidesByResult(campaign.config) && cls === 'success' && !decidesByRetries(campaign.config, callFacts(obs))) {
      await reviseCompletedLead(trx, attempt, leadDecider('success', campaign, attempt, callFacts(obs), attempt.ended_at ?? now), now);
    }
    return { result: 'confirmed' };
  }
  await markProvisionalVoicemail(trx, attempt.id, obs.answeredBy ?? null);
  await reviseCompletedLead(trx, attempt, leadDecider('voicemail', campaign, attempt, callFacts(obs), attempt.ended_at ?? now), now);
  return { result: 'revised', cls };
}

/**
 * A webhook success the call list never showed becomes final (poller.ts): no source will
 * say who answered, so the rules on the result decide now, on what the webhook reported
 * (kept in call_results), in the same transaction. True when it was finalised.
 */
export async function finaliseProvisional(ctx: OutcomeContext, attempt: AttemptRow): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await finaliseUnconfirmed(trx, attempt.id))) return false;
    const campaign = ctx.campaign(attempt.campaign_id);
    if (!campaign || !decidesByResult(campaign.config)) return true;
    const kept = await callResultOf(trx, attempt.id);
    const facts: CallFacts = { status: kept?.status ?? attempt.call_status ?? 'completed', answeredBy: null, variables: parseStoredJson(kept?.extracted_json ?? null) };
    if (decidesByRetries(campaign.config, facts)) return true;
    await reviseCompletedLead(trx, attempt, leadDecider('success', campaign, attempt, facts, attempt.ended_at ?? ctx.now()), ctx.now());
    return true;
  });
}

/** What the rules on the result read of a final observation. */
function callFacts(obs: CallObservation): CallFacts {
  return { status: obs.status, answeredBy: obs.answeredBy, variables: obs.given?.extracted_variables };
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
    if (moved) await leadAfterOutcome(trx, attempt, retryDecider('unknown', campaign.config, now), now);
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

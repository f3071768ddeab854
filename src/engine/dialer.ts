import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { AttemptRow, Database } from '../store/types.js';
import { recordEvent } from '../store/events.js';
import type { GroupCommit } from '../store/group-commit.js';
import { markUnknown, recordAnswer, transitionAttempt } from '../store/attempts.js';
import { leadBackUncounted, leadCancelledUncounted, leadContactInvalid } from '../store/lead-transitions.js';
import { ACCOUNT_PAUSE_MS, RATE_LIMIT_WAIT_MS } from './policy.js';
import { classifyError, type ClassifiedError, type EngineClient } from './ports.js';
import type { PredialVerdict } from './predial.js';

// Sends make_call for one committed attempt and records what the answer proves
// (rule 6). make_call is sent at most once per attempt: this is the only caller, and
// every path out of it leaves the attempt in a state nothing re-sends.

/** What the dialer reports up, so the scheduler can pause a campaign or the account. */
export type DialReport =
  | { kind: 'placed' }
  | { kind: 'not-sent'; retryAt: number }
  | { kind: 'rate-limited'; retryAfterMs: number }
  | { kind: 'token-rejected' }
  | { kind: 'assistant-not-found' }
  | { kind: 'account-rejected'; detail: string }
  | { kind: 'number-rejected'; detail: string }
  | { kind: 'unknown'; detail: string }
  /** The pre-dial check did not approve the call: nothing was sent, the attempt is not counted. */
  | { kind: 'not-approved'; verdict: Exclude<PredialVerdict, { kind: 'call' }> };

export interface DialContext {
  db: Kysely<Database>;
  /** Records the answer in a transaction shared with the other answers of this turn. */
  commit: GroupCommit;
  client: EngineClient;
  logger: Logger;
  now: () => number;
  settleMs: number;
}

export interface DialRequest {
  attempt: AttemptRow;
  variables: Record<string, unknown>;
  /** Asked right before sending: the window must be open at that instant (rule 1). */
  canSend: () => boolean;
  /** Why `canSend` said no, and when the lead may be tried again (the next window opening, or at once). */
  notSent: () => { retryAt: number; reason: string };
  /**
   * The service does not know the campaign's assistant (404): stops the campaign. Awaited
   * before the refused attempt frees its slot, so no pass in between finds the campaign
   * still running and dials it again.
   */
  assistantMissing: () => Promise<void>;
  /**
   * The campaign's pre-dial check (predial.ts), when it has one: asked after the claim (the
   * attempt holds its slot and its number meanwhile) and before make_call, which is sent
   * only on its yes. Never throws.
   */
  check?: () => Promise<PredialVerdict>;
}

/** Places one call and records the outcome of the request. Never throws. */
export async function dial(ctx: DialContext, req: DialRequest): Promise<DialReport> {
  const { attempt } = req;
  // The attempt's logger is made only for the lines that need it: a pino child serialises
  // its bindings when created, once per call for a line the placed path does not write.
  const ids = { attempt: attempt.id, lead: attempt.lead_id };
  const log = (): Logger => ctx.logger.child(ids);
  if (req.check) {
    const verdict = await req.check();
    if (verdict.kind !== 'call') {
      await notApproved(ctx, attempt, verdict);
      if (verdict.kind === 'cancel') log().info({ reason: verdict.reason }, 'pre-dial check refused the call: lead cancelled');
      return { kind: 'not-approved', verdict };
    }
  }
  let answer: { callId: string | null; sent?: boolean };
  try {
    answer = await ctx.client.makeCall(
      { phone_number: attempt.phone_number, assistant_id: attempt.assistant_id, variables: req.variables },
      { canSend: req.canSend },
    );
  } catch (err) {
    return recordFailure(ctx, req, classifyError(err), log());
  }
  const now = ctx.now();
  if (answer.sent === false) {
    const { retryAt, reason } = req.notSent();
    await withdraw(ctx, attempt, retryAt, reason, now);
    return { kind: 'not-sent', retryAt };
  }
  const callId = answer.callId;
  // A webhook may have ended the attempt before this answer arrived: it keeps its outcome.
  await ctx.commit.run((trx) => recordAnswer(trx, attempt.id, callId, now));
  ctx.logger.info({ ...ids, callId: answer.callId }, 'call placed');
  return { kind: 'placed' };
}

async function withdraw(ctx: DialContext, attempt: AttemptRow, dueAt: number, reason: string, now: number): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await transitionAttempt(trx, attempt.id, ['dialing'], 'withdrawn', { counted: 0, detail: reason, ended_at: now });
    if (moved) await leadBackUncounted(trx, attempt, dueAt, reason, now);
  });
}

/**
 * The pre-dial check said no (or gave no answer): the attempt was never sent, so it is
 * withdrawn uncounted, and its lead is cancelled (a refusal with a reason) or due again later.
 */
async function notApproved(ctx: DialContext, attempt: AttemptRow, verdict: Exclude<PredialVerdict, { kind: 'call' }>): Promise<void> {
  const now = ctx.now();
  if (verdict.kind !== 'cancel') return withdraw(ctx, attempt, now + verdict.afterMs, verdict.detail, now);
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await transitionAttempt(trx, attempt.id, ['dialing'], 'withdrawn', { counted: 0, detail: `pre-dial check refused: ${verdict.reason}`, ended_at: now });
    if (moved) await leadCancelledUncounted(trx, attempt, verdict.reason, now);
  });
}

/** A definite refusal that is not the lead's fault: nobody was called, the lead goes back. */
async function rejectUncounted(ctx: DialContext, attempt: AttemptRow, detail: string, dueAt: number, now: number): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const moved = await transitionAttempt(trx, attempt.id, ['dialing'], 'rejected', {
      outcome: 'rejected', counted: 0, detail, answered_at: now, ended_at: now,
    });
    if (moved) await leadBackUncounted(trx, attempt, dueAt, detail, now);
  });
}

async function recordFailure(ctx: DialContext, req: DialRequest, err: ClassifiedError, log: Logger): Promise<DialReport> {
  const { attempt } = req;
  const now = ctx.now();
  const event = (kind: string, data: Record<string, unknown>) =>
    recordEvent(ctx.db, { at: now, campaignId: attempt.campaign_id, leadId: attempt.lead_id, attemptId: attempt.id, kind, data });
  switch (err.kind) {
    case 'rate-limited': {
      const wait = err.retryAfterMs ?? RATE_LIMIT_WAIT_MS;
      await withdraw(ctx, attempt, now + wait, 'rate limited (429)', now);
      log.warn({ retryAfterMs: wait }, 'make_call rate limited; attempt put back uncounted');
      return { kind: 'rate-limited', retryAfterMs: wait };
    }
    case 'token-rejected':
      if (err.mayHaveBeenPlaced) {
        // A 2xx that is not the API's JSON (a login page, a proxy's page, a cut-off answer)
        // or a redirect after the POST: the call may exist, so the lead must not be dialled
        // again before the call list settles the attempt (rule 6). Dialing stops meanwhile.
        const detail = `make_call answer was not the API's (HTTP ${err.status ?? '?'}): the call may have been placed`;
        await markUnknown(ctx.db, attempt.id, { detail, settleDeadline: now + ctx.settleMs });
        await event('unknown', { reason: detail });
        log.error({ reason: detail }, 'make_call answer was a login page, a redirect or not JSON; the attempt is unknown until the call list settles it');
        return { kind: 'token-rejected' };
      }
      await withdraw(ctx, attempt, now, 'token rejected by the service', now);
      log.error('make_call: the service rejected the API token; dialing stops until it works again');
      return { kind: 'token-rejected' };
    case 'not-found':
      // The assistant is gone or not ours: nobody was called and every call would fail.
      await req.assistantMissing();
      await rejectUncounted(ctx, attempt, 'assistant not found (404)', now, now);
      await event('rejected', { status: 404 });
      return { kind: 'assistant-not-found' };
    case 'validation':
    case 'rejected': {
      const numberProblem =
        err.status === 400 || (err.fieldErrors !== undefined && Object.keys(err.fieldErrors).some((f) => f.startsWith('phone')));
      if (numberProblem) {
        const detail = `service rejected the number (${err.status ?? 'error'})`;
        await ctx.db.transaction().execute(async (trx) => {
          const moved = await transitionAttempt(trx, attempt.id, ['dialing'], 'rejected', {
            outcome: 'rejected', counted: 1, detail, answered_at: now, ended_at: now,
          });
          if (moved) await leadContactInvalid(trx, attempt, detail, now);
        });
        await event('rejected', { status: err.status, number: true });
        return { kind: 'number-rejected', detail };
      }
      // 422 without field errors is the account (e.g. insufficient balance): not the lead's fault.
      const detail = `service refused the call (${err.status ?? err.kind})`;
      await rejectUncounted(ctx, attempt, detail, now + ACCOUNT_PAUSE_MS, now);
      await event('rejected', { status: err.status });
      return { kind: 'account-rejected', detail };
    }
    case 'server':
    case 'network': {
      // The call may exist. It stays live until the call list settles it (rule 6).
      const detail = err.kind === 'server' ? `server error ${err.status ?? ''}`.trim() : 'connection failed or timed out';
      await markUnknown(ctx.db, attempt.id, { detail, settleDeadline: now + ctx.settleMs });
      await event('unknown', { reason: detail });
      log.warn({ reason: detail }, 'make_call answer lost; the attempt is unknown until the call list settles it');
      return { kind: 'unknown', detail };
    }
  }
}

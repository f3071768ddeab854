import { parseServiceTime, postCallWebhookSchema } from '../service/schema/records.js';
import { attemptByCallId, liveAttemptByPhone } from './attempts.js';
import type { Transaction } from 'kysely';
import type { AttemptRow, Database } from '../store/types.js';
import { announceObservation, applyObservation, type CallObservation, type OutcomeContext } from './outcomes.js';
import { normaliseServicePhone } from './phone-match.js';

/** accepted: applied to an attempt; otherwise understood but not applied (or invalid). */
export interface WebhookResult {
  accepted: boolean;
  /** 'applied' | 'duplicate' | 'unknown-call' | 'invalid payload: …' */
  detail: string;
  invalid?: boolean;
}

export interface WebhookContext extends OutcomeContext {
  serverTimezone: string;
  clockSkewMs: number;
}

/**
 * Applies one post-call webhook. The payload names the call by id and customer
 * number; without a call id we know, rule 3 makes the live attempt on that number the
 * only candidate, provided the call was created after that attempt was sent.
 */
export async function handleWebhookPayload(ctx: WebhookContext, payload: unknown): Promise<WebhookResult> {
  const parsed = postCallWebhookSchema.safeParse(payload);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { accepted: false, invalid: true, detail: `invalid payload: ${first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'unreadable'}` };
  }
  const body = parsed.data;
  const callId = String(body.id);
  // The payload has no answered_by unless a deployment adds it; absent means "not said".
  const raw = payload as Record<string, unknown>;
  const answeredBy = 'answered_by' in raw ? (typeof raw.answered_by === 'string' ? raw.answered_by : null) : undefined;
  const obs: CallObservation = {
    callId,
    status: body.status,
    answeredBy,
    // Our own receipt time, never the service's finished_at: a wrong server zone must
    // not make a retry fall due before retry_interval has really passed.
    endedAt: null,
    source: 'webhook',
  };
  // Finding the attempt and applying the outcome share one transaction (and its batch).
  const found = await ctx.commit.run(async (trx) => {
    const attempt = await findAttempt(trx, ctx, callId, body.customer_phone, body.created_at);
    return attempt ? { attempt, applied: await applyObservation(trx, ctx, attempt, obs) } : null;
  });
  if (!found) return { accepted: false, detail: 'unknown-call' };
  announceObservation(ctx, found.attempt, obs, found.applied);
  const result = found.applied.result;
  return result === 'ignored' ? { accepted: false, detail: 'duplicate' } : { accepted: true, detail: 'applied' };
}

/**
 * The attempt a delivery is about: by call id, else the live attempt on the customer's
 * number (rule 3 makes it the only one), if the call was created after it was sent.
 */
async function findAttempt(
  trx: Transaction<Database>,
  ctx: WebhookContext,
  callId: string,
  customerPhone: string | null | undefined,
  createdAtText: string | null | undefined,
): Promise<AttemptRow | undefined> {
  const byId = await attemptByCallId(trx, callId);
  if (byId || !customerPhone) return byId;
  const candidate = await liveAttemptByPhone(trx, normaliseServicePhone(customerPhone));
  if (!candidate || (candidate.call_id !== null && candidate.call_id !== callId)) return undefined;
  const createdAt = parseServiceTime(createdAtText, ctx.serverTimezone);
  const sentAt = candidate.sent_at ?? candidate.created_at;
  return createdAt === null || createdAt >= sentAt - ctx.clockSkewMs ? candidate : undefined;
}

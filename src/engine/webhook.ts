import { parseServiceTime, postCallWebhookSchema } from '../service/schema/records.js';
import { attemptByCallId, liveAttemptByPhone } from './attempts.js';
import { observeCall, type OutcomeContext } from './outcomes.js';
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
  let attempt = await attemptByCallId(ctx.db, callId);
  if (!attempt && body.customer_phone) {
    const candidate = await liveAttemptByPhone(ctx.db, normaliseServicePhone(body.customer_phone));
    const createdAt = parseServiceTime(body.created_at, ctx.serverTimezone);
    const sentAt = candidate ? (candidate.sent_at ?? candidate.created_at) : 0;
    const sameCall = candidate && (candidate.call_id === null || candidate.call_id === callId);
    if (candidate && sameCall && (createdAt === null || createdAt >= sentAt - ctx.clockSkewMs)) attempt = candidate;
  }
  if (!attempt) return { accepted: false, detail: 'unknown-call' };
  // The payload has no answered_by unless a deployment adds it; absent means "not said".
  const raw = payload as Record<string, unknown>;
  const answeredBy = 'answered_by' in raw ? (typeof raw.answered_by === 'string' ? raw.answered_by : null) : undefined;
  const result = await observeCall(ctx, attempt, {
    callId,
    status: body.status,
    answeredBy,
    // Our own receipt time, never the service's finished_at: a wrong server zone must
    // not make a retry fall due before retry_interval has really passed.
    endedAt: null,
    source: 'webhook',
  });
  return result === 'ignored' ? { accepted: false, detail: 'duplicate' } : { accepted: true, detail: 'applied' };
}

import { parseServiceTime, postCallWebhookSchema, type PostCallWebhook } from '../service/schema/records.js';
import { createdAfterSend, createdByArrival } from './call-time.js';
import { attemptByCallId, liveAttemptByPhone } from '../store/attempts.js';
import type { Kysely } from 'kysely';
import type { AttemptRow, Database } from '../store/types.js';
import { announceObservation, applyObservation, type CallObservation, type OutcomeContext } from './outcomes.js';
import { normaliseServicePhone } from './phone-match.js';
import { applyOptOut } from './opt-out.js';

/** accepted: applied to an attempt; otherwise understood but not applied (or invalid). */
export interface WebhookResult {
  accepted: boolean;
  /** 'applied' | 'duplicate' | 'unknown-call' | 'invalid payload: …' */
  detail: string;
  invalid?: boolean;
  /** With several accounts: the account whose call it was (README, "Many accounts"). */
  account?: string;
}

export interface WebhookContext extends OutcomeContext {
  serverTimezone: string;
  clockSkewMs: number;
  /** Told when the service's times disagree with `api.server_timezone` (so an operator can fix it). */
  onZoneDoubt?: (detail: string) => void;
}

/**
 * With several accounts (accounts.ts): the context of the engine whose call the attempt
 * found is, so that the one lookup that finds the attempt also routes the delivery.
 */
export type WebhookRoute = (attempt: AttemptRow) => WebhookContext;

/** The group-commit key under which a webhook names the call it looks up. */
const WEBHOOK_CALL_ID = 'webhook-call-id';

/**
 * Applies one post-call webhook. The payload names the call by id and customer
 * number; without a call id we know, rule 3 makes the live attempt on that number the
 * only candidate, provided the call was created after that attempt was sent. `route`
 * picks the context the attempt found is applied in (default: `ctx`, which finds it).
 */
export async function handleWebhookPayload(
  ctx: WebhookContext,
  payload: unknown,
  receivedAt: number,
  route?: WebhookRoute,
  /** Written in the same transaction, whatever the delivery turns out to be (a queued delivery's removal). */
  alongside?: (trx: Kysely<Database>) => Promise<void>,
): Promise<WebhookResult> {
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
    given: {
      ...body.given,
      id: callId,
      status: body.status,
      duration: body.duration,
      created_at: body.created_at,
      finished_at: body.finished_at,
    },
  };
  // Finding the attempt and applying the outcome share one transaction (and its batch).
  const found = await ctx.commit.run(
    async (trx, batch) => {
      await alongside?.(trx);
      const attempt = await findAttempt(trx, ctx, body, receivedAt, () => batch.of(WEBHOOK_CALL_ID));
      if (!attempt) return null;
      const applyContext = route?.(attempt) ?? ctx;
      return { attempt, applyContext, applied: await applyObservation(trx, applyContext, attempt, obs) };
    },
    // The batch's webhooks find their attempts in one read (store/attempts.ts).
    { key: { kind: WEBHOOK_CALL_ID, value: callId } },
  );
  if (!found) return { accepted: false, detail: 'unknown-call' };
  const { applyContext } = found;
  announceObservation(applyContext, found.attempt, obs, found.applied);
  // Opt-outs (docs/design.md §11): "no more calls" in the extracted variables suppresses the number everywhere.
  await applyOptOut(applyContext, found.attempt, body.extracted_variables);
  const result = found.applied.result;
  return result === 'ignored' ? { accepted: false, detail: 'duplicate' } : { accepted: true, detail: 'applied' };
}

/**
 * The attempt a delivery names, read outside any transaction: with several active instances
 * (accounts.ts) its account says whether this instance applies the delivery or queues it for
 * the account's holder; where it is applied, the attempt is found again. Undefined: an
 * invalid payload or no call.
 */
export async function deliveryAttempt(ctx: WebhookContext, payload: unknown, receivedAt: number): Promise<AttemptRow | undefined> {
  const parsed = postCallWebhookSchema.safeParse(payload);
  // Any doubt about the service's zone is told once, when the delivery is applied.
  return parsed.success ? findAttempt(ctx.db, { ...ctx, onZoneDoubt: undefined }, parsed.data, receivedAt) : undefined;
}

/**
 * The attempt a delivery is about: by call id, else the live attempt on the customer's
 * number (rule 3 makes it the only one), if the call was created after it was sent: by
 * the service's created_at, or by the call's length counted back from this arrival,
 * which a wrong `api.server_timezone` cannot shift.
 */
async function findAttempt(
  trx: Kysely<Database>,
  ctx: WebhookContext,
  body: PostCallWebhook,
  receivedAt: number,
  batchCallIds?: () => readonly string[],
): Promise<AttemptRow | undefined> {
  const callId = String(body.id);
  const byId = await attemptByCallId(trx, callId, batchCallIds);
  if (byId || !body.customer_phone) return byId;
  const candidate = await liveAttemptByPhone(trx, normaliseServicePhone(body.customer_phone));
  if (!candidate || (candidate.call_id !== null && candidate.call_id !== callId)) return undefined;
  const sentAt = candidate.sent_at ?? candidate.created_at;
  const createdAt = parseServiceTime(body.created_at, ctx.serverTimezone);
  if (createdAfterSend(createdAt, sentAt, ctx.clockSkewMs)) return candidate;
  const byArrival = createdByArrival(createdAt, parseServiceTime(body.finished_at, ctx.serverTimezone), receivedAt);
  if (byArrival === null || !createdAfterSend(byArrival, sentAt, ctx.clockSkewMs)) return undefined;
  ctx.onZoneDoubt?.(
    `call ${callId} was created ${hours(byArrival - (createdAt ?? byArrival))} later than its created_at "${body.created_at}" reads in ${ctx.serverTimezone}`,
  );
  return candidate;
}

function hours(ms: number): string {
  return `${Math.round((ms / 3_600_000) * 4) / 4} h`;
}

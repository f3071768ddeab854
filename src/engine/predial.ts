import type { PredialConfig } from '../config/types.js';
import { signatureHeader, SIGNATURE_HEADER } from '../hooks/signature.js';
import type { Clock } from '../time/clock.js';
import { PREDIAL_FAILURE_DEFER_MS, PREDIAL_MAX_RETRY_AFTER_MS, PREDIAL_MIN_RETRY_AFTER_MS } from './policy.js';

// The pre-dial check (README, "Pre-dial check"): before a claimed attempt's make_call, the
// lead is POSTed to the campaign's `predial.url`, signed as hooks are, and the call is
// placed only on {"call": true}. {"call": false, "reason": …} cancels the lead,
// {"call": false, "retry_after_seconds": N} defers it. Anything else — a timeout, a network
// error, a non-2xx, an answer that is none of these — defers it too: a lead is never called
// unchecked. This file asks and reads the answer; the dialer records what it means.

/** What the check decided. `failed` is a check that gave no answer (counted as a failure in status). */
export type PredialVerdict =
  | { kind: 'call' }
  | { kind: 'cancel'; reason: string }
  | { kind: 'defer'; afterMs: number; detail: string }
  | { kind: 'failed'; afterMs: number; detail: string };

/** What is sent about the lead (the body's fields). */
export interface PredialLead {
  campaign: string;
  leadId: number;
  /** The caller's own id of the lead, when it has one. */
  externalId?: string | null;
  /** The number about to be called (the primary, or the secondary being worked). */
  phoneNumber: string;
  variables: Record<string, unknown>;
  /** This attempt's number on the lead, counting every call placed before it (1 for the first). */
  attempt: number;
}

/**
 * Sends one check: resolves with the HTTP status and the answer's text, rejects on a
 * network error or when `signal` aborts. Built by the composition root (undici).
 */
export type PredialPost = (url: string, body: string, headers: Record<string, string>, signal: AbortSignal) => Promise<{ status: number; body: string }>;

export interface PredialDeps {
  clock: Clock;
  post: PredialPost;
  /** The value of the variable a campaign's `predial.secret_env` names; undefined when unset. */
  secret: (envName: string) => string | undefined;
}

/** The JSON body of a check. */
export function predialBody(lead: PredialLead): string {
  return JSON.stringify({
    campaign: lead.campaign,
    lead_id: lead.leadId,
    ...(lead.externalId ? { external_id: lead.externalId } : {}),
    phone_number: lead.phoneNumber,
    variables: lead.variables,
    attempt: lead.attempt,
  });
}

/**
 * Asks the check endpoint about one lead. Never throws: every failure is a `failed` verdict.
 * `stop` (the engine stopping) ends a check in flight at once, as a failure.
 */
export async function askPredial(deps: PredialDeps, config: PredialConfig, lead: PredialLead, stop?: AbortSignal): Promise<PredialVerdict> {
  if (stop?.aborted) return failed('the daemon is stopping');
  const secret = deps.secret(config.secretEnv);
  if (!secret) return failed(`$${config.secretEnv} (predial.secret_env) is not set`);
  const body = predialBody(lead);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'campaignd-predial',
    'x-campaignd-event': 'predial.check',
    [SIGNATURE_HEADER]: signatureHeader(secret, body, Math.floor(deps.clock.now() / 1000)),
  };
  // The timeout runs on the engine's clock: the request is aborted when it fires.
  const abort = new AbortController();
  const stopTimer = new AbortController();
  let timedOut = false;
  const timer = deps.clock.sleep(config.timeoutMs, stopTimer.signal).then(() => {
    if (stopTimer.signal.aborted) return;
    timedOut = true;
    abort.abort();
  });
  const onStop = (): void => abort.abort();
  stop?.addEventListener('abort', onStop, { once: true });
  try {
    const answer = await deps.post(config.url, body, headers, abort.signal);
    if (timedOut) return failed(`no answer within ${config.timeoutMs} ms`);
    if (stop?.aborted) return failed('the daemon is stopping');
    return readAnswer(answer.status, answer.body);
  } catch (err) {
    if (timedOut) return failed(`no answer within ${config.timeoutMs} ms`);
    if (stop?.aborted) return failed('the daemon is stopping');
    return failed(`request failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    stop?.removeEventListener('abort', onStop);
    stopTimer.abort();
    await timer;
  }
}

/** What an answer means; anything not exactly one of the three is a failure. */
export function readAnswer(status: number, text: string): PredialVerdict {
  if (status < 200 || status > 299) return failed(`answered HTTP ${status}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return failed('answer is not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return failed('answer is not a JSON object');
  const o = value as { call?: unknown; reason?: unknown; retry_after_seconds?: unknown };
  if (o.call === true) return { kind: 'call' };
  if (o.call !== false) return failed('answer has no boolean "call"');
  const reason = typeof o.reason === 'string' ? o.reason.trim().slice(0, 500) : '';
  if (o.retry_after_seconds !== undefined) {
    const n = o.retry_after_seconds;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return failed('"retry_after_seconds" is not a number of seconds ≥ 0');
    const afterMs = Math.min(Math.max(Math.round(n * 1000), PREDIAL_MIN_RETRY_AFTER_MS), PREDIAL_MAX_RETRY_AFTER_MS);
    return { kind: 'defer', afterMs, detail: reason ? `pre-dial check: not now (${reason})` : 'pre-dial check: not now' };
  }
  if (reason) return { kind: 'cancel', reason };
  return failed('"call": false without "reason" or "retry_after_seconds"');
}

function failed(detail: string): PredialVerdict {
  return { kind: 'failed', afterMs: PREDIAL_FAILURE_DEFER_MS, detail: `pre-dial check failed: ${detail}` };
}

import type { Clock } from '../time/clock.js';
import type { Logger } from '../log/logger.js';
import type { BudgetPriority, RateBudget } from './rate-budget.js';
import type { HttpRequest, HttpTransport } from './http-transport.js';
import { readRateHeaders } from './rate-headers.js';
import {
  RequestWithheldError,
  ServiceError,
  bodyMessage,
  extractFieldErrors,
  kindForStatus,
  retryAfterMs,
  type ErrorKind,
} from './errors.js';

/**
 * Runs one logical request against the service: waits for the shared budget, sends,
 * classifies the answer, and retries where that is safe. Reads (GET) retry on server
 * and network failures with exponential backoff and full jitter; any request except
 * make_call retries after a 429 (the service did not act on it); make_call is never
 * retried, and its server/network failures are flagged "may have been placed". Every
 * answer's `X-RateLimit-Remaining`/`-Reset` tighten the budget; a 429 pauses it.
 */

/** One HTTP exchange, reported for metrics. */
export interface RequestEvent {
  endpoint: string;
  method: string;
  status: number | null;
  kind: 'ok' | ErrorKind;
  durationMs: number;
  /** Time spent waiting for the rate budget before this exchange. */
  waitedMs: number;
}

export interface ServiceCall<T> {
  /** Short name of the operation for logs, metrics and errors (e.g. `make_call`). */
  endpoint: string;
  method: HttpRequest['method'];
  /** Path and query under the base URL. */
  path: string;
  body?: unknown;
  /** Reads the JSON of a 2xx answer; throws when its shape is wrong. */
  parse: (json: unknown) => T;
  /** True only for make_call: never retried, and failures may mean a placed call. */
  placesCall?: boolean;
  /**
   * Asked once the rate budget granted the request, right before it is sent: false
   * withholds it (a calling window may have closed while the request waited).
   */
  beforeSend?: () => boolean;
}

export interface ExecutorOptions {
  transport: HttpTransport;
  budget: RateBudget;
  clock: Clock;
  logger: Logger;
  getToken: () => string;
  random: () => number;
  onRequest?: (e: RequestEvent) => void;
  maxTries?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
}

export type Executor = <T>(call: ServiceCall<T>) => Promise<T>;

/** Builds the function every endpoint method goes through. */
export function createExecutor(opts: ExecutorOptions): Executor {
  const maxTries = opts.maxTries ?? 5;
  const base = opts.backoffBaseMs ?? 500;
  const capMs = opts.backoffCapMs ?? 30_000;
  const { clock, logger } = opts;

  return async function execute<T>(call: ServiceCall<T>): Promise<T> {
    const priority: BudgetPriority = call.placesCall ? 'call' : 'read';
    for (let attempt = 1; ; attempt++) {
      const { waitedMs, seq } = await opts.budget.acquireGrant(priority);
      // The grant counts until the exchange is over (rate-budget.ts); settle is idempotent,
      // and the finally covers every way out (withheld, no token, thrown).
      try {
        if (call.beforeSend && !call.beforeSend()) {
          opts.budget.release(seq);
          throw new RequestWithheldError(call.endpoint);
        }
        let token: string;
        try {
          token = opts.getToken();
        } catch (e) {
          // No token to send (e.g. the token file is gone): nothing was sent, so nothing was placed.
          opts.budget.release(seq);
          throw new ServiceError(`${call.endpoint}: no API token available`, { kind: 'token-rejected', endpoint: call.endpoint, cause: e });
        }
        const scrub = (s: string): string => (token.length >= 4 ? s.split(token).join('[redacted]') : s);
        const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
        let body: string | undefined;
        if (call.body !== undefined) {
          body = JSON.stringify(call.body);
          headers['content-type'] = 'application/json';
        }
        const started = clock.now();
        let status: number | null = null;
        let outcome: { ok: true; value: T } | { ok: false; error: ServiceError };
        try {
          const answer = await opts.transport.send({ method: call.method, path: call.path, headers, ...(body === undefined ? {} : { body }) });
          opts.budget.settle(seq);
          status = answer.status;
          // A 429's own wait (Retry-After) governs it: the pause below; any other answer's
          // count of what is left may only make the budget stricter.
          const ceiling = answer.status === 429 ? null : readRateHeaders(answer.rateLimitRemaining, answer.rateLimitReset, clock.now());
          if (ceiling) opts.budget.tighten(ceiling.remaining, ceiling.resetAtMs, seq);
          outcome = classify(call, answer.status, answer.contentType, answer.text, answer.retryAfter, clock.now(), scrub);
        } catch (e) {
          opts.budget.settle(seq);
          outcome = { ok: false, error: networkError(call, e, scrub) };
        }
        const durationMs = Math.max(0, clock.now() - started);
        const kind = outcome.ok ? 'ok' : outcome.error.kind;
        logger.debug({ endpoint: call.endpoint, method: call.method, path: call.path, status, durationMs }, 'service request');
        opts.onRequest?.({ endpoint: call.endpoint, method: call.method, status, kind, durationMs, waitedMs });
        if (outcome.ok) return outcome.value;

        const error = outcome.error;
        if (error.kind === 'rate-limited') opts.budget.pause(error.retryAfterMs ?? 0);
        if (call.placesCall || attempt >= maxTries) throw error;
        if (error.kind === 'rate-limited') continue; // the budget holds this request back until the wait is over
        // A 2xx of the wrong shape is a server bug that asking again will not fix.
        const transient = error.kind === 'network' || (error.kind === 'server' && (error.status ?? 0) >= 500);
        if (call.method === 'GET' && transient) {
          const delay = Math.floor(opts.random() * Math.min(capMs, base * 2 ** (attempt - 1)));
          logger.debug({ endpoint: call.endpoint, kind: error.kind, attempt, delay }, 'service read failed; retrying');
          await clock.sleep(delay);
          continue;
        }
        throw error;
      } finally {
        opts.budget.settle(seq);
      }
    }
  };

  function classify<T>(
    call: ServiceCall<T>,
    status: number,
    contentType: string,
    text: string,
    retryAfter: string | undefined,
    now: number,
    scrub: (s: string) => string,
  ): { ok: true; value: T } | { ok: false; error: ServiceError } {
    const { json, isJson } = readJson(text, contentType);
    const is2xx = status >= 200 && status < 300;
    if (is2xx && isJson) {
      try {
        return { ok: true, value: call.parse(json) };
      } catch (e) {
        const error = new ServiceError(`${call.endpoint}: unexpected answer shape (HTTP ${status})`, {
          kind: 'server',
          endpoint: call.endpoint,
          status,
          cause: e,
          // A 2xx from make_call means placed; its parser never throws, but stay safe.
          mayHaveBeenPlaced: call.placesCall === true,
        });
        return { ok: false, error };
      }
    }
    const kind = kindForStatus(status, json, isJson);
    const placedMaybe =
      call.placesCall === true && (kind === 'server' || kind === 'network' || (is2xx && kind === 'token-rejected'));
    const msg = isJson ? bodyMessage(json) : undefined;
    const detail = is2xx && !isJson ? 'answer is not JSON' : msg;
    const init = {
      kind,
      endpoint: call.endpoint,
      status,
      mayHaveBeenPlaced: placedMaybe,
      ...(kind === 'rate-limited' ? { retryAfterMs: retryAfterMs(retryAfter, json, now) } : {}),
      ...(kind === 'validation' ? { fieldErrors: extractFieldErrors(json) ?? {} } : {}),
    };
    return {
      ok: false,
      error: new ServiceError(scrub(`${call.endpoint}: HTTP ${status} ${kind}${detail ? `: ${detail}` : ''}`), init),
    };
  }
}

/** Parses an answer body; an HTML content type or unparsable text is "not JSON", an empty body is null. */
function readJson(text: string, contentType: string): { json: unknown; isJson: boolean } {
  if (/html/i.test(contentType)) return { json: undefined, isJson: false };
  if (text.trim() === '') return { json: null, isJson: true };
  try {
    return { json: JSON.parse(text) as unknown, isJson: true };
  } catch {
    return { json: undefined, isJson: false };
  }
}

/** A transport failure (timeout, reset, refusal) as a ServiceError of kind network. */
function networkError(call: ServiceCall<unknown>, e: unknown, scrub: (s: string) => string): ServiceError {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
  const text = e instanceof Error ? e.message : String(e);
  return new ServiceError(scrub(`${call.endpoint}: network failure${code ? ` (${code})` : ''}: ${text}`), {
    kind: 'network',
    endpoint: call.endpoint,
    mayHaveBeenPlaced: call.placesCall === true,
    cause: e,
  });
}

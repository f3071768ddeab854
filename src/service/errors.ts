/**
 * Failures of the service, classified by kind from the status code and the body's
 * shape, never from message text (docs/design.md §5; rule 6, at most once).
 */

/** What went wrong, as far as the caller needs to decide what to do next. */
export type ErrorKind =
  | 'validation'
  | 'not-found'
  | 'rejected'
  | 'rate-limited'
  | 'token-rejected'
  | 'server'
  | 'network';

/** Wait used after a 429 that names none (the live service's 429 body says `retry_after: 60`; docs/simulator.md). */
export const DEFAULT_RETRY_AFTER_MS = 60_000;

export interface ServiceErrorInit {
  kind: ErrorKind;
  endpoint: string;
  status?: number;
  retryAfterMs?: number;
  fieldErrors?: Record<string, string[]>;
  mayHaveBeenPlaced?: boolean;
  cause?: unknown;
}

/** A failed service request. `mayHaveBeenPlaced` is set only for make_call. */
export class ServiceError extends Error {
  readonly kind: ErrorKind;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly fieldErrors?: Record<string, string[]>;
  readonly endpoint: string;
  readonly mayHaveBeenPlaced: boolean;

  constructor(message: string, init: ServiceErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.kind = init.kind;
    this.endpoint = init.endpoint;
    this.mayHaveBeenPlaced = init.mayHaveBeenPlaced ?? false;
    if (init.status !== undefined) this.status = init.status;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    if (init.fieldErrors !== undefined) this.fieldErrors = init.fieldErrors;
  }
}

/** True when `e` is a ServiceError of one of the given kinds (any kind when none given). */
export function isServiceError(e: unknown, ...kinds: ErrorKind[]): e is ServiceError {
  return e instanceof ServiceError && (kinds.length === 0 || kinds.includes(e.kind));
}

/**
 * Milliseconds to wait from a `Retry-After` header (delta seconds or an HTTP-date),
 * else from the body's `retry_after` seconds, else the default of 60 s.
 */
export function retryAfterMs(header: string | undefined, body: unknown, nowMs: number): number {
  if (header !== undefined && header.trim() !== '') {
    const h = header.trim();
    if (/^\d+(\.\d+)?$/.test(h)) return Math.round(Number(h) * 1000);
    const at = Date.parse(h);
    if (!Number.isNaN(at)) return Math.max(0, at - nowMs);
  }
  if (isRecord(body)) {
    const v = body['retry_after'];
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isFinite(n) && n >= 0) return Math.round(n * 1000);
  }
  return DEFAULT_RETRY_AFTER_MS;
}

/** Kind of a non-2xx HTTP answer (or of a 2xx one that is not JSON). */
export function kindForStatus(status: number, body: unknown, bodyIsJson: boolean): ErrorKind {
  if (status >= 200 && status < 300) return bodyIsJson ? 'server' : 'token-rejected';
  if (status >= 300 && status < 400) return 'token-rejected';
  if (status === 401 || status === 403) return 'token-rejected';
  if (status === 429) return 'rate-limited';
  if (status === 404) return 'not-found';
  if (status === 422) return isRecord(body) && isRecord(body['errors']) ? 'validation' : 'rejected';
  if (status >= 400 && status < 500) return 'rejected';
  return 'server';
}

/** The `errors` object of a validation body, reduced to `{field: string[]}`. */
export function extractFieldErrors(body: unknown): Record<string, string[]> | undefined {
  if (!isRecord(body) || !isRecord(body['errors'])) return undefined;
  const out: Record<string, string[]> = {};
  for (const [field, v] of Object.entries(body['errors'])) {
    out[field] = Array.isArray(v) ? v.map((m) => String(m)) : [String(v)];
  }
  return out;
}

/** The body's `message` (or `error`) string, shortened, for an error message. */
export function bodyMessage(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const m = body['message'] ?? body['error'];
  if (typeof m !== 'string' || m === '') return undefined;
  return m.length > 200 ? `${m.slice(0, 200)}…` : m;
}

/** True for a non-null, non-array object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A request its caller withdrew before it was sent (`beforeSend` said no): nothing reached the service. */
export class RequestWithheldError extends Error {
  constructor(readonly endpoint: string) {
    super(`${endpoint} withheld before sending`);
    this.name = 'RequestWithheldError';
  }
}

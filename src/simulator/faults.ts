import { isObject } from './http-util.js';
import { mulberry32 } from './random.js';

/** One fault rule set through POST /__sim/faults; shares are probabilities 0–1. */
export interface FaultRule {
  /** Exact request path (no query) the rule applies to; null: every /api/user path. */
  path: string | null;
  /** Share of requests answered 429 with `retry_after`. */
  rateLimited: number;
  retryAfter: number;
  /** Share of requests answered with `serverStatus` (5xx). */
  serverError: number;
  serverStatus: number;
  /** Delay before answering, in networkClock ms. */
  latencyMs: number;
  /** Share of make_call requests whose socket is destroyed after the call was created. */
  dropAfterCreate: number;
  /** Share of make_call requests refused with 422 "Insufficient balance" (an error the live service is reported to send; docs/simulator.md). */
  insufficientBalance: number;
}

/** What the faults decide for one request. */
export interface FaultDecision {
  latencyMs: number;
  rateLimited: { retryAfter: number } | null;
  serverStatus: number | null;
  dropAfterCreate: boolean;
  insufficientBalance: boolean;
}

const SHARE_KEYS = ['rate_limited', 'server_error', 'drop_after_create', 'insufficient_balance'] as const;

/** Fault injection, reproducible from the simulator's seed. */
export class Faults {
  private rules: FaultRule[] = [];
  private readonly rand: () => number;

  constructor(seed: number) {
    this.rand = mulberry32(seed ^ 0x5eed);
  }

  /** Adds a rule from a /__sim/faults body; returns problems instead when the body is bad. */
  add(body: unknown): FaultRule | string[] {
    if (!isObject(body)) return ['body must be a JSON object'];
    const problems: string[] = [];
    const share = (key: string): number => {
      const v = body[key] ?? 0;
      if (typeof v !== 'number' || v < 0 || v > 1) problems.push(`${key} must be a number from 0 to 1`);
      return typeof v === 'number' ? v : 0;
    };
    const nonNegative = (key: string, dflt: number): number => {
      const v = body[key] ?? dflt;
      if (typeof v !== 'number' || v < 0) problems.push(`${key} must be a number ≥ 0`);
      return typeof v === 'number' ? v : dflt;
    };
    const [rateLimited, serverError, dropAfterCreate, insufficientBalance] = SHARE_KEYS.map(share) as [number, number, number, number];
    const serverStatus = nonNegative('server_status', 500);
    if (serverStatus < 500 || serverStatus > 599) problems.push('server_status must be 500–599');
    const path = body.path ?? null;
    if (path !== null && (typeof path !== 'string' || !path.startsWith('/'))) problems.push('path must start with /');
    const rule: FaultRule = {
      path: typeof path === 'string' ? path : null,
      rateLimited,
      retryAfter: nonNegative('retry_after', 1),
      serverError,
      serverStatus,
      latencyMs: nonNegative('latency_ms', 0),
      dropAfterCreate,
      insufficientBalance,
    };
    if (problems.length > 0) return problems;
    this.rules.push(rule);
    return rule;
  }

  /** Removes every rule. */
  reset(): void {
    this.rules = [];
  }

  /** The rules in force, for GET /__sim/faults. */
  list(): readonly FaultRule[] {
    return this.rules;
  }

  /** Rolls every rule that applies to `path`. */
  decide(path: string): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0, rateLimited: null, serverStatus: null, dropAfterCreate: false, insufficientBalance: false };
    for (const r of this.rules) {
      if (r.path !== null && r.path !== path) continue;
      decision.latencyMs += r.latencyMs;
      if (!decision.rateLimited && this.roll(r.rateLimited)) decision.rateLimited = { retryAfter: r.retryAfter };
      if (decision.serverStatus === null && this.roll(r.serverError)) decision.serverStatus = r.serverStatus;
      if (this.roll(r.dropAfterCreate)) decision.dropAfterCreate = true;
      if (this.roll(r.insufficientBalance)) decision.insufficientBalance = true;
    }
    return decision;
  }

  private roll(share: number): boolean {
    if (share <= 0) return false;
    if (share >= 1) return true;
    return this.rand() < share;
  }
}

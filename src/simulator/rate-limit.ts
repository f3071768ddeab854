import type { RateLimitOptions, RateLimitStats } from './types.js';

/** The answer of the limiter for one request. */
export interface RateVerdict {
  allowed: boolean;
  /** True when this request went over a window (not when it was refused during a lockout). */
  trip: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds at which a request would be allowed again. */
  resetAt: number;
  /** Whole seconds to wait before the next request (0 when allowed). */
  retryAfter: number;
}

interface UserLog {
  times: number[];
  lockedUntil: number;
}

/**
 * The live service's limit as it is reported (docs/simulator.md): `perMinute` requests per
 * rolling minute and at most `burst` per rolling `burstWindowSeconds`, per token.
 * Sliding logs of request arrival times on the simulator's clock. With
 * `lockoutSeconds`, a trip refuses the token outright for that long, as the live
 * service's `retry_after: 60` does. Counts what it did in `stats` (a refusal it makes
 * itself is a trip; an injected 429 is not its doing).
 */
export class RateLimiter {
  private readonly log = new Map<number, UserLog>();

  constructor(
    private readonly opts: RateLimitOptions,
    readonly stats: RateLimitStats = { allowed: 0, trips: 0, refused: 0, injected: 0 },
    /** The same counts per user (token): each token has its own limiter. */
    readonly byUser: Map<number, RateLimitStats> = new Map(),
  ) {}

  /** Counts one verdict into the totals and the user's own. */
  private count(userIndex: number, what: 'allowed' | 'trips' | 'refused'): void {
    this.stats[what]++;
    let mine = this.byUser.get(userIndex);
    if (!mine) this.byUser.set(userIndex, (mine = { allowed: 0, trips: 0, refused: 0, injected: 0 }));
    mine[what]++;
  }

  /** Counts a request of `userIndex` at `now` if allowed. */
  check(userIndex: number, now: number): RateVerdict {
    const windowMs = 60_000;
    const burstMs = this.opts.burstWindowSeconds * 1000;
    const user = this.log.get(userIndex) ?? { times: [], lockedUntil: 0 };
    user.times = user.times.filter((t) => t > now - Math.max(windowMs, burstMs));
    this.log.set(userIndex, user);
    const times = user.times;
    const inMinute = times.filter((t) => t > now - windowMs);
    const limit = this.opts.perMinute;
    if (now < user.lockedUntil) {
      this.count(userIndex, 'refused');
      return refusal(false, limit, user.lockedUntil, now);
    }
    const inBurst = times.filter((t) => t > now - burstMs);
    let waitUntil = now;
    if (inMinute.length >= limit) waitUntil = Math.max(waitUntil, (inMinute[inMinute.length - limit] ?? now) + windowMs);
    if (inBurst.length >= this.opts.burst) waitUntil = Math.max(waitUntil, (inBurst[inBurst.length - this.opts.burst] ?? now) + burstMs);
    if (waitUntil > now) {
      this.count(userIndex, 'trips');
      this.count(userIndex, 'refused');
      const lockout = (this.opts.lockoutSeconds ?? 0) * 1000;
      if (lockout > 0) user.lockedUntil = waitUntil = Math.max(waitUntil, now + lockout);
      return refusal(true, limit, waitUntil, now);
    }
    this.count(userIndex, 'allowed');
    times.push(now);
    inMinute.push(now);
    return {
      allowed: true,
      trip: false,
      limit,
      remaining: Math.max(0, limit - inMinute.length),
      // When the oldest request of the minute leaves it: one more is allowed from then.
      resetAt: Math.ceil(((inMinute[0] ?? now) + windowMs) / 1000),
      retryAfter: 0,
    };
  }
}

function refusal(trip: boolean, limit: number, until: number, now: number): RateVerdict {
  return { allowed: false, trip, limit, remaining: 0, resetAt: Math.ceil(until / 1000), retryAfter: Math.max(1, Math.ceil((until - now) / 1000)) };
}

/**
 * Parses `100/min` (or `100/minute`, `100`) into the live limit's shape with bursts of
 * 20 per 10 s; `100/min,lockout=60` also refuses a token for 60 s after each trip.
 */
export function parseRateLimit(text: string): RateLimitOptions {
  const m = /^(\d+)(?:\s*\/\s*(?:m|min|minute))?(?:\s*,\s*lockout\s*=\s*(\d+)s?)?$/.exec(text.trim());
  if (!m) throw new RangeError(`rate limit must look like 100/min or 100/min,lockout=60, got "${text}"`);
  const perMinute = Number(m[1]);
  if (perMinute < 1) throw new RangeError('rate limit must be at least 1/min');
  const base = { perMinute, burst: Math.min(20, perMinute), burstWindowSeconds: 10 };
  return m[2] === undefined ? base : { ...base, lockoutSeconds: Number(m[2]) };
}

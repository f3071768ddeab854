import type { RateLimitOptions } from './types.js';

/** The answer of the limiter for one request. */
export interface RateVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch seconds at which a request would be allowed again. */
  resetAt: number;
  /** Whole seconds to wait before the next request (0 when allowed). */
  retryAfter: number;
}

/**
 * The live service's limit as service-facts.md reports it: `perMinute` requests per
 * rolling minute and at most `burst` per rolling `burstWindowSeconds`, per token.
 * Sliding logs of request times on the simulator's clock.
 */
export class RateLimiter {
  private readonly log = new Map<number, number[]>();

  constructor(private readonly opts: RateLimitOptions) {}

  /** Counts a request of `userIndex` at `now` if allowed. */
  check(userIndex: number, now: number): RateVerdict {
    const windowMs = 60_000;
    const burstMs = this.opts.burstWindowSeconds * 1000;
    const times = (this.log.get(userIndex) ?? []).filter((t) => t > now - windowMs);
    this.log.set(userIndex, times);
    const inBurst = times.filter((t) => t > now - burstMs);
    let waitUntil = now;
    if (times.length >= this.opts.perMinute) waitUntil = Math.max(waitUntil, (times[times.length - this.opts.perMinute] ?? now) + windowMs);
    if (inBurst.length >= this.opts.burst) waitUntil = Math.max(waitUntil, (inBurst[inBurst.length - this.opts.burst] ?? now) + burstMs);
    const allowed = waitUntil <= now;
    if (allowed) times.push(now);
    const oldest = times[0];
    return {
      allowed,
      limit: this.opts.perMinute,
      remaining: Math.max(0, this.opts.perMinute - times.length),
      resetAt: Math.ceil((allowed ? (oldest ?? now) + windowMs : waitUntil) / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((waitUntil - now) / 1000)),
    };
  }
}

/** Parses `100/min` (or `100/minute`, `100`) into the live limit's shape with bursts of 20 per 10 s. */
export function parseRateLimit(text: string): RateLimitOptions {
  const m = /^(\d+)(?:\s*\/\s*(?:m|min|minute))?$/.exec(text.trim());
  if (!m) throw new RangeError(`rate limit must look like 100/min, got "${text}"`);
  const perMinute = Number(m[1]);
  if (perMinute < 1) throw new RangeError('rate limit must be at least 1/min');
  return { perMinute, burst: Math.min(20, perMinute), burstWindowSeconds: 10 };
}

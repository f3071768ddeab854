/**
 * Reads `X-RateLimit-Remaining` / `X-RateLimit-Reset` into what RateBudget.tighten takes.
 *
 * `Reset` is written three ways in the wild: epoch seconds (Laravel, GitHub, the
 * simulator), epoch milliseconds, or seconds from now (IETF draft `RateLimit-Reset`).
 * A plain number cannot say which, so its size decides: ≥ 1e11 is epoch ms (1e11 s is
 * the year 5138), ≥ 1e9 is epoch seconds (1e9 s is 2001; no limiter resets 31 years
 * from now), anything smaller is seconds from now. An epoch value assumes the service's
 * clock agrees with ours; the budget never holds a ceiling longer than a minute from
 * now, which bounds what a skewed clock can cost. Without a usable `Reset`, the count
 * is taken to last the whole minute window (the safe reading).
 */

/** A ceiling from the service: `remaining` more requests until `resetAtMs` (epoch ms). */
export interface RateHeaderCeiling {
  remaining: number;
  resetAtMs: number;
}

const EPOCH_MS_FROM = 1e11;
const EPOCH_S_FROM = 1e9;
const MINUTE_MS = 60_000;

/** The ceiling the headers state, or null when `Remaining` is absent or not a count. */
export function readRateHeaders(remaining: string | undefined, reset: string | undefined, nowMs: number): RateHeaderCeiling | null {
  if (remaining === undefined || !/^\s*\d+\s*$/.test(remaining)) return null;
  return { remaining: Number(remaining), resetAtMs: resetAt(reset, nowMs) };
}

function resetAt(reset: string | undefined, nowMs: number): number {
  const v = reset === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(reset) ? NaN : Number(reset);
  if (!Number.isFinite(v)) return nowMs + MINUTE_MS;
  if (v >= EPOCH_MS_FROM) return v;
  if (v >= EPOCH_S_FROM) return v * 1000;
  return nowMs + v * 1000;
}

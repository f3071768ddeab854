// The live service's reported limit: at most `perMinute` requests in any rolling
// 60 s and `burst` in any rolling 10 s, per token presented. A refused request is not
// counted (else a client that waits as told could be locked out for good). Headers on
// every answer: X-RateLimit-Limit, X-RateLimit-Remaining, and X-RateLimit-Reset as the
// SECONDS until a slot frees (deployments differ; this one does not send epoch seconds).

const MINUTE = 60_000;
const BURST_WINDOW = 10_000;

/** A limiter, or one that lets everything through when `perMinute` is null. */
export function createRateLimiter({ perMinute, burst }) {
  const hits = new Map(); // token → ascending arrival instants within the last minute

  /** Counts the request at `now`; `{ok, headers, retryAfter}` (retryAfter in whole seconds when refused). */
  function take(token, now) {
    if (perMinute === null) return { ok: true, headers: {} };
    const list = (hits.get(token) ?? []).filter((t) => t > now - MINUTE);
    hits.set(token, list);
    const inBurst = list.filter((t) => t > now - BURST_WINDOW);
    let freeAt = null;
    if (list.length >= perMinute) freeAt = list[list.length - perMinute] + MINUTE;
    if (inBurst.length >= burst) freeAt = Math.max(freeAt ?? 0, inBurst[inBurst.length - burst] + BURST_WINDOW);
    if (freeAt !== null) {
      const retryAfter = Math.max(1, Math.ceil((freeAt - now) / 1000));
      return { ok: false, retryAfter, headers: headers(list, now, retryAfter) };
    }
    list.push(now);
    return { ok: true, headers: headers(list, now, null) };
  }

  function headers(list, now, retryAfter) {
    const reset = retryAfter ?? (list.length === 0 ? 0 : Math.ceil((list[0] + MINUTE - now) / 1000));
    return {
      'x-ratelimit-limit': String(perMinute),
      'x-ratelimit-remaining': String(Math.max(0, perMinute - list.length)),
      'x-ratelimit-reset': String(reset),
    };
  }

  return { take };
}

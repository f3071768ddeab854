// Injected faults, set through the control interface (never through /api/user). A fault
// plan is a list of waves, each active for `duration_ms` in turn (cycling; a wave without
// a duration lasts forever); a wave holds rules, each optionally limited to one path:
//   latency_ms            number or [min, max]: answer this much later
//   reset                 share of requests whose connection is reset before anything is done
//   rate_limited_header   share answered 429 with ONLY a Retry-After header
//   rate_limited_body     share answered 429 with ONLY a body retry_after
//   retry_after           the seconds those 429s name (default 1)
//   server_error          share answered `server_status` (default 500)
//   html                  5xx bodies are a proxy's HTML page instead of JSON
//   drop_after_create     share of make_call requests whose connection is reset AFTER
//                         the call was created (the client never learns it exists)
//   times                 the rule answers at most this many requests, then stands aside
// Draws come from seeded streams in arrival order: one for the faults that answer a
// request, one for lost make_call answers, so the n-th request meets the same fault in
// every run with the same seed and plan, whatever mix of endpoints came before it.
import { between, stream } from './prng.mjs';

const SHARES = ['reset', 'rate_limited_header', 'rate_limited_body', 'server_error', 'drop_after_create'];

/** Checks a fault plan from the control interface; returns the problems (empty when fine). */
export function planProblems(plan) {
  const problems = [];
  if (!plan || !Array.isArray(plan.waves) || plan.waves.length === 0) return ['body must be {waves: [{duration_ms?, rules: [...]}, ...]}'];
  plan.waves.forEach((w, i) => {
    if (w.duration_ms !== undefined && w.duration_ms !== null && !(Number.isFinite(w.duration_ms) && w.duration_ms > 0)) problems.push(`waves[${i}].duration_ms must be a positive number`);
    if (!Array.isArray(w.rules)) problems.push(`waves[${i}].rules must be an array`);
    for (const [j, r] of (w.rules ?? []).entries()) {
      for (const k of SHARES) {
        if (r[k] !== undefined && !(typeof r[k] === 'number' && r[k] >= 0 && r[k] <= 1)) problems.push(`waves[${i}].rules[${j}].${k} must be a share in [0, 1]`);
      }
      if (r.times !== undefined && !(Number.isInteger(r.times) && r.times > 0)) problems.push(`waves[${i}].rules[${j}].times must be a positive integer`);
      const unknown = Object.keys(r).filter((k) => ![...SHARES, 'path', 'latency_ms', 'retry_after', 'server_status', 'html', 'times'].includes(k));
      if (unknown.length) problems.push(`waves[${i}].rules[${j}]: unknown ${unknown.join(', ')}`);
    }
  });
  return problems;
}

/** The fault state: the current plan, the draws, and counts of what was injected. */
export function createFaults(seed) {
  const rand = stream(seed, 'faults');
  const dropRand = stream(seed, 'drops');
  let plan = null;
  let since = 0;
  let used = new Map(); // rule → requests it answered (for `times`)
  const injected = { reset: 0, rate_limited_header: 0, rate_limited_body: 0, server_error: 0, latency: 0, drop_after_create: 0 };

  function activeRules(now) {
    if (!plan) return [];
    const waves = plan.waves;
    const total = waves.every((w) => w.duration_ms) ? waves.reduce((s, w) => s + w.duration_ms, 0) : null;
    let t = total === null ? now - since : (now - since) % total;
    for (const w of waves) {
      if (!w.duration_ms || t < w.duration_ms) return w.rules;
      t -= w.duration_ms;
    }
    return [];
  }

  /**
   * What to do with one /api/user request: `{latencyMs, action, retryAfter, status, html, dropAfterCreate}`
   * where action is null, 'reset', 'rate_limited_header', 'rate_limited_body' or 'server_error'.
   */
  function decide(path, now) {
    const out = { latencyMs: 0, action: null, retryAfter: 1, status: 500, html: false, dropAfterCreate: false };
    for (const r of activeRules(now)) {
      if (r.path && r.path !== path) continue;
      if (r.times !== undefined && (used.get(r) ?? 0) >= r.times) continue;
      if (r.latency_ms !== undefined) {
        const ms = Array.isArray(r.latency_ms) ? between(rand, r.latency_ms[0], r.latency_ms[1]) : r.latency_ms;
        if (ms > 0) {
          out.latencyMs += ms;
          injected.latency++;
        }
      }
      for (const k of ['reset', 'rate_limited_header', 'rate_limited_body', 'server_error']) {
        if (out.action === null && r[k] && rand() < r[k]) {
          out.action = k;
          out.retryAfter = r.retry_after ?? 1;
          out.status = r.server_status ?? 500;
          out.html = r.html === true;
          used.set(r, (used.get(r) ?? 0) + 1);
        }
      }
      if (path === '/api/user/make_call' && r.drop_after_create && dropRand() < r.drop_after_create) out.dropAfterCreate = true;
    }
    if (out.action) injected[out.action]++;
    return out;
  }

  return {
    decide,
    /** Called when a make_call connection was really dropped after its call was created. */
    countDrop: () => injected.drop_after_create++,
    set(newPlan, now) {
      plan = newPlan;
      since = now;
      used = new Map();
    },
    clear() {
      plan = null;
    },
    plan: () => plan,
    injected: () => ({ ...injected }),
  };
}

// The test-only control interface, on its OWN port (never under /api/user, never counted
// by the rate limit): the fake's record of every call, its counters, and fault plans.
import { recordForTest } from './calls.mjs';
import { planProblems } from './faults.mjs';
import { readJson, sendJson } from './http-io.mjs';

/** Handles one control request. */
export async function routeControl(ctx, req, res) {
  const path = new URL(req.url ?? '/', 'http://control').pathname;
  const key = `${req.method} ${path}`;
  if (key === 'GET /calls') return sendJson(res, 200, { calls: ctx.calls.all().map(recordForTest) });
  if (key === 'GET /stats') return sendJson(res, 200, { ...ctx.stats, injected: ctx.faults.injected() });
  if (key === 'GET /faults') return sendJson(res, 200, { plan: ctx.faults.plan() });
  if (key === 'POST /faults/reset') {
    ctx.faults.clear();
    return sendJson(res, 200, { plan: null });
  }
  if (key === 'POST /faults' || key === 'POST /token') {
    let body;
    try {
      body = await readJson(req);
    } catch {
      return sendJson(res, 400, { message: 'Malformed JSON.' });
    }
    if (key === 'POST /token') {
      if (typeof body?.token !== 'string' || body.token === '') return sendJson(res, 422, { message: 'token must be a non-empty string' });
      ctx.opts.token = body.token;
      return sendJson(res, 200, { ok: true });
    }
    const problems = planProblems(body);
    if (problems.length) return sendJson(res, 422, { message: 'bad fault plan', problems });
    ctx.faults.set(body, Date.now());
    return sendJson(res, 200, { plan: body });
  }
  return sendJson(res, 404, { message: `no control ${key}` });
}

// Bad input, service answers: an independent fake service (a real HTTP server) sits
// between the running daemon and the simulator and answers some requests with hostile
// content — HTML, truncated JSON, wrong types, redirects, endless or shifting pages —
// while the rest go through. Each case must give a clear log line naming what was wrong,
// and the campaign must still finish with nobody called twice (the simulator's record).
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { goodCampaign, leadCsv, startDaemon, type AskSimulator, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { capturingLogger, type Hit } from './client-fixture.js';
import { waitUntil } from '../helpers/wait.js';

const COUNT = 4;
const numbers = Array.from({ length: COUNT }, (_, i) => `+1202555${1000 + i}`);
const FINAL = ['completed', 'reached-max-retries'];

let daemon: Daemon | null = null;
afterEach(async () => {
  await daemon?.close();
  daemon = null;
});

type Answer = (hit: Hit, res: ServerResponse, ask: AskSimulator) => Promise<void>;

interface ServiceCase {
  name: string;
  /** Which requests get the hostile answer: `METHOD /path` (query left out). */
  endpoint: 'POST /api/user/make_call' | 'GET /api/user/calls' | 'GET /api/user/assistants/get';
  /** How many of them (default 1); the rest go through. */
  times?: number;
  answer: Answer;
  /** The clear error in the daemon's log. */
  log?: RegExp;
  /** A tolerated shape: no such complaint in the log. */
  notLog?: RegExp;
  /** A tolerated shape: what the daemon made of it. */
  check?: (d: Daemon) => Promise<void>;
}

/** make_call's answer was read as "placed, no call id" (the spec's `data: {}`): the call list binds it. */
const placedWithoutId = async (d: Daemon): Promise<void> => {
  const attempt = await d.app.db.selectFrom('attempts').selectAll().orderBy('id').executeTakeFirstOrThrow();
  // Placed (answered 2xx), ended from the call list, which also supplied the call id.
  expect(attempt).toMatchObject({ state: 'ended', outcome_source: 'poll' });
  expect(attempt.answered_at).not.toBeNull();
  expect(attempt.call_id).not.toBeNull();
};

const send = (res: ServerResponse, status: number, body: string, type = 'application/json', headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
};
const LOGIN_PAGE = '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form action="/login">…</form></body></html>';
const GATEWAY_PAGE = '<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';

/** The simulator places the call; the daemon gets `body` instead of its answer. */
const placedThen =
  (status: number, body: string, type = 'application/json', headers: Record<string, string> = {}): Answer =>
  async (hit, res, ask) => {
    await ask(hit);
    send(res, status, body, type, headers);
  };
/** The call is never placed; the daemon gets `body`. */
const refused =
  (status: number, body: string, type = 'application/json', headers: Record<string, string> = {}): Answer =>
  async (_hit, res) => {
    send(res, status, body, type, headers);
  };
/** The simulator's call list, with its records rewritten. */
const rewrittenList =
  (rewrite: (records: Record<string, unknown>[]) => unknown): Answer =>
  async (hit, res, ask) => {
    const real = await ask(hit);
    const json = JSON.parse(real.body) as unknown;
    const records = (Array.isArray(json) ? json : (json as { data: unknown[] }).data) as Record<string, unknown>[];
    send(res, real.status, JSON.stringify(rewrite(records)));
  };

const cases: ServiceCase[] = [
  // make_call: the call may have been placed → never a second call.
  { name: 'make_call: HTML 200 after placing the call', endpoint: 'POST /api/user/make_call', answer: placedThen(200, LOGIN_PAGE, 'text/html'), log: /make_call answer was not the API's \(HTTP 200\): the call may have been placed/ },
  { name: 'make_call: HTML 200 login page, nothing placed', endpoint: 'POST /api/user/make_call', answer: refused(200, LOGIN_PAGE, 'text/html'), log: /make_call answer was not the API's \(HTTP 200\): the call may have been placed/ },
  { name: 'make_call: truncated JSON after placing', endpoint: 'POST /api/user/make_call', answer: placedThen(200, '{"message":"Call initiated","data":{"id":'), log: /the call may have been placed/ },
  { name: 'make_call: data [] instead of {}', endpoint: 'POST /api/user/make_call', answer: placedThen(200, '{"message":"Call initiated","data":[]}'), check: placedWithoutId },
  { name: 'make_call: data.id an object', endpoint: 'POST /api/user/make_call', answer: placedThen(200, '{"message":"Call initiated","data":{"id":{"value":7}}}'), check: placedWithoutId },
  { name: 'make_call: 500 with an HTML body after placing', endpoint: 'POST /api/user/make_call', answer: placedThen(500, GATEWAY_PAGE, 'text/html'), log: /"reason":"server error 500","msg":"make_call answer lost; the attempt is unknown until the call list settles it"/ },
  { name: 'make_call: 502 HTML, nothing placed', endpoint: 'POST /api/user/make_call', times: 2, answer: refused(502, GATEWAY_PAGE, 'text/html'), log: /"reason":"server error 502","msg":"make_call answer lost/ },
  { name: 'make_call: HTML 200 with a JSON content type after placing', endpoint: 'POST /api/user/make_call', answer: placedThen(200, LOGIN_PAGE), log: /make_call answer was a login page, a redirect or not JSON/ },
  { name: 'make_call: 200 text/plain "OK" after placing', endpoint: 'POST /api/user/make_call', answer: placedThen(200, 'OK', 'text/plain'), log: /the call may have been placed/ },
  { name: 'make_call: 302 to a login page, nothing placed', endpoint: 'POST /api/user/make_call', answer: refused(302, '', 'text/html', { location: '/login' }), log: /make_call: the service rejected the API token; dialing stops until it works again/ },
  { name: 'make_call: empty 200', endpoint: 'POST /api/user/make_call', answer: placedThen(200, ''), check: placedWithoutId },
  { name: 'make_call: JSON null', endpoint: 'POST /api/user/make_call', answer: placedThen(200, 'null'), check: placedWithoutId },
  // The call list: polling must survive and close every call.
  { name: 'calls: ids as strings', endpoint: 'GET /api/user/calls', times: 1000, answer: rewrittenList((r) => r.map((c) => ({ ...c, id: String(c.id) }))), notLog: /records of unexpected shape left out/ },
  { name: 'calls: status null', endpoint: 'GET /api/user/calls', times: 3, answer: rewrittenList((r) => r.map((c) => ({ ...c, status: null }))), log: /"endpoint":"list_calls","skipped":\d+,"msg":"records of unexpected shape left out"/ },
  { name: 'calls: created_at garbage', endpoint: 'GET /api/user/calls', times: 3, answer: rewrittenList((r) => r.map((c) => ({ ...c, created_at: 'yesterday-ish' }))), notLog: /records of unexpected shape left out/ },
  { name: 'calls: records of the wrong type', endpoint: 'GET /api/user/calls', times: 3, answer: rewrittenList((r) => [42, 'call', null, ...r.map(() => ({ id: { nested: true } }))]), log: /"endpoint":"list_calls","skipped":\d+,"msg":"records of unexpected shape left out"/ },
  { name: 'calls: data {} instead of []', endpoint: 'GET /api/user/calls', times: 3, answer: rewrittenList(() => ({ data: {}, current_page: 1 })), log: /"err":"list_calls: unexpected answer shape \(HTTP 200\)".*"msg":"polling the call list failed; will retry"/ },
  { name: 'calls: truncated JSON', endpoint: 'GET /api/user/calls', times: 3, answer: refused(200, '{"data":[{"id":1,"status":"comp'), log: /"err":"list_calls: HTTP 200 token-rejected: answer is not JSON".*polling the call list failed; will retry/ },
  { name: 'calls: HTML 200', endpoint: 'GET /api/user/calls', times: 3, answer: refused(200, LOGIN_PAGE, 'text/html'), log: /"err":"list_calls: HTTP 200 token-rejected: answer is not JSON".*polling the call list failed; will retry/ },
  { name: 'calls: 503 with an HTML body', endpoint: 'GET /api/user/calls', times: 3, answer: refused(503, GATEWAY_PAGE, 'text/html'), log: /"endpoint":"list_calls","kind":"server".*"msg":"service read failed; retrying"/ },
  { name: 'calls: 302 to a login page', endpoint: 'GET /api/user/calls', times: 3, answer: refused(302, '', 'text/html', { location: '/login' }), log: /"err":"list_calls: HTTP 302 token-rejected".*polling the call list failed; will retry/ },
  // Assistants at start (zones and ids are checked later).
  { name: 'assistants: HTML 200 at start', endpoint: 'GET /api/user/assistants/get', answer: refused(200, LOGIN_PAGE, 'text/html'), log: /"err":"list_assistants: HTTP 200 token-rejected: answer is not JSON".*could not list assistants; campaign zones and assistants are checked later/ },
];

describe('bad input: hostile service answers under the real client and engine', () => {
  it.each(cases)('$name', async (c) => {
    const { logger, lines } = capturingLogger();
    let hits = 0;
    daemon = await startDaemon({
      campaigns: { 'svc.yaml': goodCampaign('svc', '../leads/svc.csv') },
      leads: { 'svc.csv': leadCsv(COUNT) },
      logger,
      intercept: async (hit, res, ask) => {
        if (`${hit.method} ${hit.url.split('?')[0]}` !== c.endpoint || hits >= (c.times ?? 1)) return false;
        hits++;
        await c.answer(hit, res, ask);
        return true;
      },
    });
    const d = daemon;
    await d.waitCampaignDone('svc', 20_000);
    expect(hits).toBeGreaterThan(0);
    const states = await d.leadStates('svc');
    expect(states).toHaveLength(COUNT);
    expect(states.every((s) => FINAL.includes(s))).toBe(true);
    // Nobody called twice; every completed lead was called once.
    for (const [i, phone] of numbers.entries()) {
      const calls = d.simCallsTo([phone]);
      expect(calls, phone).toBeLessThanOrEqual(1);
      if (states[i] === 'completed') expect(calls, phone).toBe(1);
    }
    const log = lines.join('');
    if (c.log) expect(log).toMatch(c.log);
    if (c.notLog) expect(log).not.toMatch(c.notLog);
    await c.check?.(d);
    expect(c.log ?? c.notLog ?? c.check).toBeDefined();
    await waitUntil(async () => (await d.status()).daemon.running, { message: 'the daemon row to show it running' });
  });
});

/** The page a list_calls request asks for. */
const pageOf = (hit: Hit): number => Number(new URL(hit.url, 'http://x').searchParams.get('page') ?? '1');
/** The same request for page 1 of 100 records: the simulator's whole list in these tests. */
const wholeList = (hit: Hit): Hit => {
  const url = new URL(hit.url, 'http://x');
  url.searchParams.set('page', '1');
  url.searchParams.set('per_page', '100');
  return { ...hit, url: `${url.pathname}${url.search}` };
};
const recordsOf = (body: string): Record<string, unknown>[] => {
  const json = JSON.parse(body) as unknown;
  return (Array.isArray(json) ? json : (json as { data: Record<string, unknown>[] }).data) as Record<string, unknown>[];
};

describe('bad input: call lists that do not hold still', () => {
  it('a next_page_url that points at itself forever: each poll stops, says why, and the campaign finishes once the list is sane', async () => {
    const { logger, lines } = capturingLogger();
    let hostile = true;
    const pages: number[] = [];
    const decoy = { id: 990_001, client_phone_number: '+19995550000', status: 'completed', created_at: '2026-01-05 10:00:00' };
    daemon = await startDaemon({
      campaigns: { 'svc.yaml': goodCampaign('svc', '../leads/svc.csv') },
      leads: { 'svc.csv': leadCsv(COUNT) },
      logger,
      intercept: async (hit, res) => {
        if (!hostile || `${hit.method} ${hit.url.split('?')[0]}` !== 'GET /api/user/calls') return false;
        pages.push(pageOf(hit));
        send(res, 200, JSON.stringify({ data: [decoy], current_page: pageOf(hit), next_page_url: `http://fake${hit.url}`, last_page: null, total: null }));
        return true;
      },
    });
    const d = daemon;
    // Three polls started, so each earlier one ended.
    await waitUntil(() => pages.filter((p) => p === 1).length >= 3, { message: () => `three polls; pages asked: ${pages.slice(0, 20).join(',')}…(${pages.length})` });
    expect(Math.max(...pages)).toBe(2);
    expect(lines.join('')).toMatch(/"err":"list_calls: page 2 repeats page 1 \(a next_page_url that loops\?\)".*polling the call list failed; will retry/);
    expect(await d.leadStates('svc')).toHaveLength(COUNT);
    hostile = false;
    await d.waitCampaignDone('svc', 20_000);
    for (const phone of numbers) expect(d.simCallsTo([phone]), phone).toBe(1);
  });

  it('a record moves from page 1 to page 2 between requests: every call is still closed once', async () => {
    let shifted = 0;
    daemon = await startDaemon({
      campaigns: { 'svc.yaml': goodCampaign('svc', '../leads/svc.csv').replace('max_calls_in_parallel: 2', 'max_calls_in_parallel: 4') },
      leads: { 'svc.csv': leadCsv(COUNT) },
      intercept: async (hit, res, ask) => {
        if (`${hit.method} ${hit.url.split('?')[0]}` !== 'GET /api/user/calls') return false;
        // Pages of two; between the requests for page 1 and page 2 a new call "arrives" at
        // the front, so the last record of page 1 is served again as the first of page 2.
        const all = recordsOf((await ask(wholeList(hit))).body);
        const page = pageOf(hit);
        const start = page === 1 ? 0 : (page - 1) * 2 - 1;
        if (page === 2 && all.length > 2) shifted++;
        const data = all.slice(start, start + 2);
        const more = start + 2 < all.length;
        send(res, 200, JSON.stringify({ data, current_page: page, next_page_url: more ? `http://fake/api/user/calls?page=${page + 1}` : null, total: all.length }));
        return true;
      },
    });
    const d = daemon;
    await d.waitCampaignDone('svc', 20_000);
    expect(shifted).toBeGreaterThan(0);
    expect((await d.leadStates('svc')).every((s) => s === 'completed')).toBe(true);
    for (const phone of numbers) expect(d.simCallsTo([phone]), phone).toBe(1);
    const ended = await d.app.db.selectFrom('attempts').select('id').where('state', '=', 'ended').execute();
    expect(ended).toHaveLength(COUNT);
  });
});

// GET /api/v1/results: the results export as a feed resumable by its cursor, through the
// generated client, every line checked against the document. The cursor must hold where
// an instant would not: hundreds of leads imported in the same millisecond, and a run of
// the engine polled while it changes leads.
import { afterEach, describe, expect, it } from 'vitest';
import { RESULTS_SETTLE_MS } from '../../src/api/routes/results.js';
import { ManualClock } from '../../src/time/clock.js';
import { apiClient, fetchOpenApi, rawRequest, ResponseChecker, type ApiClient } from '../helpers/api.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

interface Line {
  cursor: string;
  campaign: string;
  lead_id: number;
  state: string;
  attempts: number;
  attempt_history: unknown[];
}

async function feed(api: ApiClient, query: { campaign?: string; since?: string } = {}): Promise<Line[]> {
  const res = await api.GET('/api/v1/results', { params: { query }, parseAs: 'text' });
  expect(res.response.status).toBe(200);
  expect(res.response.headers.get('content-type')).toMatch(/^application\/jsonl/);
  return String(res.data ?? '')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

/** Cursors compare as (updated_at, lead_id); -1, 0, 1. */
function order(a: string, b: string): number {
  const [at, aid] = a.split('.').map(Number) as [number, number];
  const [bt, bid] = b.split('.').map(Number) as [number, number];
  return at !== bt ? Math.sign(at - bt) : Math.sign(aid - bid);
}

describe('API: results', () => {
  it('resumes exactly after the line whose cursor it is given, when hundreds of leads changed in the same millisecond', async () => {
    const clock = new ManualClock();
    stack = await startStack({
      clock,
      campaigns: [{ name: 'bulk', leads: phoneNumbers(450).map((phone) => ({ phone })) }, { name: 'other', leads: phoneNumbers(5, 500).map((phone) => ({ phone })) }],
      startEngine: false,
      api: true,
    });
    const api = apiClient(stack.httpUrl, new ResponseChecker(await fetchOpenApi(stack.httpUrl)));
    // Changes younger than the settle time are left for the next request.
    expect(await feed(api)).toEqual([]);
    await clock.advance(RESULTS_SETTLE_MS);
    const all = await feed(api, { campaign: 'bulk' });
    // More than two of the export's pages (200 leads each), one line per lead, in cursor order.
    expect(all).toHaveLength(450);
    expect(new Set(all.map((l) => l.lead_id)).size).toBe(450);
    expect(new Set(all.map((l) => l.cursor.split('.')[0])).size).toBe(1);
    for (let i = 1; i < all.length; i++) expect(order(all[i - 1]!.cursor, all[i]!.cursor)).toBe(-1);
    expect(all[0]).toMatchObject({ campaign: 'bulk', state: 'pending', attempts: 0, attempt_history: [] });
    // A client that kept line 137's cursor (say its connection dropped there) gets the rest, once.
    for (const at of [0, 137, 199, 200, 449]) {
      const rest = await feed(api, { campaign: 'bulk', since: all[at]!.cursor });
      expect(rest.map((l) => l.lead_id)).toEqual(all.slice(at + 1).map((l) => l.lead_id));
    }
    // A client that goes away mid-stream costs the daemon nothing: the next request is answered.
    const abort = new AbortController();
    const partial = await fetch(`${stack.httpUrl}/api/v1/results`, { signal: abort.signal });
    const reader = partial.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    abort.abort();
    await reader.closed.catch(() => undefined);
    // Every campaign without `campaign`; an instant includes the changes at it.
    expect(await feed(api)).toHaveLength(455);
    expect(await feed(api, { since: new Date(clock.now() - RESULTS_SETTLE_MS).toISOString() })).toHaveLength(455);
    expect(await feed(api, { since: new Date(clock.now() - RESULTS_SETTLE_MS + 1).toISOString() })).toEqual([]);
  });

  it('polled while the engine runs: every change once, in order, none lost, and the last line of each lead is its final result', async () => {
    stack = await startStack({
      scale: 100,
      campaigns: [{ name: 'spring', leads: phoneNumbers(24).map((phone) => ({ phone })), settings: { maxCallsInParallel: 4 } }],
      api: true,
    });
    const s = stack;
    const api = apiClient(s.httpUrl, new ResponseChecker(await fetchOpenApi(s.httpUrl)));
    const seen: Line[] = [];
    let since: string | undefined;
    let answersWithLines = 0;
    const poll = async (): Promise<void> => {
      const lines = await feed(api, since === undefined ? {} : { since });
      if (lines.length > 0) answersWithLines++;
      seen.push(...lines);
      if (lines.length > 0) since = lines.at(-1)!.cursor;
    };
    let quiet = false;
    const done = s.waitForQuiet(120_000).then(() => (quiet = true));
    // A client polling every few (simulated) seconds, as a CRM would.
    while (!quiet) {
      await poll();
      await Promise.race([done, s.clock.sleep(3_000)]);
    }
    await done;
    await s.stopEngine();
    await s.clock.sleep(RESULTS_SETTLE_MS + 1);
    await poll();

    expect(answersWithLines).toBeGreaterThan(2);
    for (let i = 1; i < seen.length; i++) expect(order(seen[i - 1]!.cursor, seen[i]!.cursor)).toBe(-1);
    // The same lead and change never twice.
    expect(new Set(seen.map((l) => l.cursor)).size).toBe(seen.length);
    // None lost: the last line of each lead is what the whole export says now.
    const lastOf = new Map(seen.map((l) => [l.lead_id, l]));
    const now = await feed(api);
    expect(now).toHaveLength(24);
    for (const line of now) expect(lastOf.get(line.lead_id)).toEqual(line);
    expect(now.every((l) => l.state !== 'pending' && l.attempts > 0)).toBe(true);
    // Leads were seen more than once as they changed (pending, then a result).
    expect(seen.length).toBeGreaterThan(24);
    expect(await feed(api, { since: now.reduce((a, l) => (order(a, l.cursor) > 0 ? a : l.cursor), now[0]!.cursor) })).toEqual([]);
  });

  it('refuses an unknown campaign (404) and a since that is neither cursor nor instant (400), as problem documents', async () => {
    stack = await startStack({ campaigns: [{ name: 'spring', leads: phoneNumbers(2).map((phone) => ({ phone })) }], startEngine: false, api: true });
    const checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
    const api = apiClient(stack.httpUrl, checker);
    const missing = await api.GET('/api/v1/results', { params: { query: { campaign: 'winter' } }, parseAs: 'text' });
    expect(missing.response.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toBe('application/problem+json');
    expect(missing.error).toMatchObject({ status: 404, title: 'Not found' });
    for (const since of ['yesterday', '12', '1.2.3', '2026-13-45', 'abc.1']) {
      const bad = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/results', `/api/v1/results?since=${encodeURIComponent(since)}`);
      expect(bad.status, since).toBe(400);
      expect(bad.body).toMatchObject({ status: 400, title: 'Invalid query', errors: [{ pointer: '/query/since' }] });
    }
  });
});

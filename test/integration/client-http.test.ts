import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, systemClock, type Clock } from '../../src/time/clock.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { createServiceClient, ServiceError, type RequestEvent, type ServiceClient } from '../../src/service/client.js';
import { parseServiceTime } from '../../src/service/schema/records.js';
import { capturingLogger, json, startFakeService, type FakeService, type Handler } from './client-fixture.js';

const TOKEN = 'tok-9f8e7d6c5b4a';
let service: FakeService | undefined;
let client: ServiceClient | undefined;

afterEach(async () => {
  await client?.close();
  await service?.close();
  client = undefined;
  service = undefined;
});

async function setup(
  handler: Handler,
  extra: { clock?: Clock; logger?: Logger; requestTimeoutMs?: number; onRequest?: (e: RequestEvent) => void; baseSuffix?: string } = {},
): Promise<{ service: FakeService; client: ServiceClient }> {
  service = await startFakeService(handler);
  client = createServiceClient({
    baseUrl: service.url + (extra.baseSuffix ?? ''),
    getToken: () => TOKEN,
    clock: extra.clock ?? systemClock,
    logger: extra.logger ?? silentLogger(),
    random: () => 0,
    requestTimeoutMs: extra.requestTimeoutMs ?? 5_000,
    connectTimeoutMs: 2_000,
    ...(extra.onRequest ? { onRequest: extra.onRequest } : {}),
  });
  return { service, client };
}

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected the request to fail');
}

describe('requests', () => {
  it('send Accept, Bearer token, and Content-Type only with a body; keep a base path prefix', async () => {
    const { service, client } = await setup((req, res) =>
      req.method === 'GET' ? json(res, 200, []) : json(res, 200, { message: 'Webhook disabled successfully', data: [] }),
      { baseSuffix: '/prefix/' },
    );
    await client.listModels();
    expect(await client.disableWebhook(5)).toEqual({ message: 'Webhook disabled successfully' });
    const [get, post] = service.hits;
    expect(get?.url).toBe('/prefix/api/user/assistants/models');
    expect(get?.headers['accept']).toBe('application/json');
    expect(get?.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(get?.headers['content-type']).toBeUndefined();
    expect(post?.url).toBe('/prefix/api/user/assistants/disable-webhook');
    expect(post?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post?.body ?? '')).toEqual({ assistant_id: 5 });
  });

  it('put list filters in the query string under the names the live service uses', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, { current_page: 2, data: [], next_page_url: null }));
    await client.listCalls({ assistant_id: 4, phone_number: '+14155550100', date_from: '2026-01-05', per_page: 100, page: 2, status: 'completed' });
    const url = new URL(service.hits[0]?.url ?? '', 'http://x');
    expect(url.pathname).toBe('/api/user/calls');
    expect(Object.fromEntries(url.searchParams)).toEqual({ assistant_id: '4', phone_number: '+14155550100', date_from: '2026-01-05', per_page: '100', page: '2', status: 'completed' });
  });

  it('parse records liberally: string ids, [] variables, transcript arrays, both timestamp shapes', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 200, {
        current_page: 1,
        last_page: 1,
        next_page_url: null,
        data: [
          { id: '1234569', status: 'completed', variables: [], transcript: [{ text: 'Hi', sender: 'AI', type: 'bot', timestamp: 1 }], carrier_cost: '0.02', answered_by: null, created_at: '2026-01-05 09:00:00' },
          { id: 17, status: 'busy', variables: { a: 1 }, transcript: 'text', carrier_cost: 0.01, answered_by: 'human', created_at: '2026-01-05T08:00:00.000000Z' },
        ],
      }),
    );
    const page = await client.listCalls();
    expect(page.items.map((c) => c.id)).toEqual([1234569, 17]);
    expect(page.items[0]).toMatchObject({ variables: {}, transcript: 'AI: Hi', carrier_cost: 0.02, answered_by: null });
    expect(page.items.map((c) => parseServiceTime(c.created_at, 'Europe/Berlin'))).toEqual([
      Date.UTC(2026, 0, 5, 8),
      Date.UTC(2026, 0, 5, 8),
    ]);
  });

  it('read a tool create answer and a validation failure with its field errors', async () => {
    const { client } = await setup((_req, res, hit) => {
      const body = JSON.parse(hit.body) as { name: string };
      if (body.name === 'ok_tool') json(res, 201, { message: 'Tool created successfully', data: { id: '3', name: 'ok_tool', headers: [], schema: [] } });
      else json(res, 422, { message: 'Validation failed', errors: { name: ['The name field format is invalid.'] } });
    });
    expect((await client.createTool({ name: 'ok_tool', description: 'd', endpoint: 'https://x.example', method: 'GET' })).id).toBe(3);
    const e = await failure(client.createTool({ name: 'Bad', description: 'd', endpoint: 'https://x.example', method: 'GET' }));
    expect(e).toMatchObject({ kind: 'validation', status: 422, endpoint: 'create_tool', mayHaveBeenPlaced: false });
    expect(e.fieldErrors).toEqual({ name: ['The name field format is invalid.'] });
  });
});

describe('bad token', () => {
  it('a 302 to a login page is token-rejected and not followed', async () => {
    const { service, client } = await setup((req, res) => {
      if (req.url === '/login') return void res.end('<html>login</html>');
      res.writeHead(302, { location: '/login' });
      res.end();
    });
    const e = await failure(client.listCampaigns());
    expect(e).toMatchObject({ kind: 'token-rejected', status: 302 });
    expect(service.hits.map((h) => h.url)).toEqual(['/api/user/campaigns']);
  });

  it('an HTML 200 is token-rejected', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Sign in</title>');
    });
    expect((await failure(client.listVoices())).kind).toBe('token-rejected');
  });

  it('a 401 is token-rejected, and neither the error nor the logs contain the token', async () => {
    const { logger, lines } = capturingLogger();
    const { client } = await setup(
      (req, res) => json(res, 401, { error: 'Invalid API key', message: `bad key ${String(req.headers['authorization'])}` }),
      { logger },
    );
    const e = await failure(client.listModels());
    expect(e.kind).toBe('token-rejected');
    expect(e.message).not.toContain(TOKEN);
    expect(e.message).toContain('[redacted]');
    expect(JSON.stringify(e)).not.toContain(TOKEN);
    expect(lines.some((l) => l.includes('"path":"/api/user/assistants/models"') && l.includes('"status":401'))).toBe(true);
    expect(lines.join('')).not.toContain(TOKEN);
  });
});

describe('make_call', () => {
  const req = { phone_number: '+14155550100', assistant_id: 12 };

  it('returns call_id when the service names it, null for data: {}', async () => {
    let n = 0;
    const { client } = await setup((_req, res) =>
      n++ === 0
        ? json(res, 200, { message: 'Call initiated successfully', call_id: 480337, status: 'initiated' })
        : json(res, 200, { message: 'Call initiated successfully', data: {} }),
    );
    expect(await client.makeCall(req)).toEqual({ message: 'Call initiated successfully', callId: '480337', sent: true });
    expect(await client.makeCall(req)).toEqual({ message: 'Call initiated successfully', callId: null, sent: true });
  });

  it('beforeSend answering false withholds the request: the service sees nothing', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, { message: 'Call initiated successfully', data: {} }));
    let asked = 0;
    const withheld = await client.makeCall(req, { beforeSend: () => (asked++, false) });
    expect(withheld).toEqual({ message: 'not sent', callId: null, sent: false });
    expect(asked).toBe(1);
    expect(service.hits).toHaveLength(0);
    expect(await client.makeCall(req, { beforeSend: () => true })).toMatchObject({ sent: true });
    expect(service.hits).toHaveLength(1);
  });

  it('a 2xx with an odd JSON body still counts as placed', async () => {
    const { client } = await setup((_req, res) => json(res, 201, ['unexpected']));
    expect(await client.makeCall(req)).toEqual({ message: '', callId: null, sent: true });
  });

  it('a 500 is server, may have been placed, and is not retried', async () => {
    const { service, client } = await setup((_req, res) => json(res, 500, { message: 'Server Error' }));
    const e = await failure(client.makeCall(req));
    expect(e).toMatchObject({ kind: 'server', status: 500, mayHaveBeenPlaced: true, endpoint: 'make_call' });
    expect(service.hits).toHaveLength(1);
  });

  it('a timeout is network, may have been placed, and is not retried', async () => {
    const { service, client } = await setup(() => undefined /* never answers */, { requestTimeoutMs: 150 });
    const e = await failure(client.makeCall(req));
    expect(e).toMatchObject({ kind: 'network', mayHaveBeenPlaced: true });
    expect(service.hits).toHaveLength(1);
  });

  it('a connection reset after the request is network, may have been placed, and is not retried', async () => {
    const { service, client } = await setup((req) => void req.socket.destroy());
    const e = await failure(client.makeCall(req));
    expect(e).toMatchObject({ kind: 'network', mayHaveBeenPlaced: true });
    expect(service.hits).toHaveLength(1);
  });

  it('definite rejections are not "may have been placed"', async () => {
    const answers: [number, unknown][] = [
      [400, { message: 'The phone number must be in E.164 format' }],
      [404, { message: 'Assistant not found' }],
      [422, { message: 'Insufficient balance' }],
      [422, { message: 'Validation failed', errors: { phone_number: ['bad'] } }],
      [302, null],
    ];
    let i = 0;
    const { service, client } = await setup((_req, res) => {
      const [status, body] = answers[i++] ?? [500, null];
      if (status === 302) {
        res.writeHead(302, { location: '/login' });
        return void res.end();
      }
      json(res, status, body);
    });
    const kinds: string[] = [];
    for (let k = 0; k < answers.length; k++) {
      const e = await failure(client.makeCall(req));
      expect(e.mayHaveBeenPlaced).toBe(false);
      kinds.push(e.kind);
    }
    expect(kinds).toEqual(['rejected', 'not-found', 'rejected', 'validation', 'token-rejected']);
    expect(service.hits).toHaveLength(answers.length);
  });

  it('an HTML 200 is token-rejected but may have been placed', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html></html>');
    });
    expect(await failure(client.makeCall(req))).toMatchObject({ kind: 'token-rejected', mayHaveBeenPlaced: true });
  });

  it('a 429 is reported (not retried) and pauses the shared budget', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    const { service, client } = await setup((_req, res) => json(res, 429, { error: 'Rate limit exceeded', retry_after: 60 }, { 'retry-after': '9' }), { clock });
    const e = await failure(client.makeCall(req));
    expect(e).toMatchObject({ kind: 'rate-limited', retryAfterMs: 9000, mayHaveBeenPlaced: false });
    expect(service.hits).toHaveLength(1);
    expect(client.budget.stats().pausedUntil).toBe(clock.now() + 9000);
  });
});

describe('reads', () => {
  it('are retried on 503 until they succeed', async () => {
    const events: RequestEvent[] = [];
    const { service, client } = await setup(
      (_req, res, _hit, i) => (i < 2 ? json(res, 503, { message: 'down' }) : json(res, 200, [{ id: 1, name: 'gpt' }])),
      { onRequest: (e) => events.push(e) },
    );
    expect(await client.listModels()).toEqual([{ id: 1, name: 'gpt' }]);
    expect(service.hits).toHaveLength(3);
    expect(events.map((e) => [e.status, e.kind])).toEqual([[503, 'server'], [503, 'server'], [200, 'ok']]);
    expect(events.every((e) => e.endpoint === 'list_models' && e.method === 'GET')).toBe(true);
  });

  it('give up after five tries', async () => {
    const { service, client } = await setup((_req, res) => json(res, 502, {}));
    expect((await failure(client.listCampaigns())).kind).toBe('server');
    expect(service.hits).toHaveLength(5);
  });

  it('are retried after a connection reset', async () => {
    const { service, client } = await setup((req, res, _hit, i) => (i === 0 ? void req.socket.destroy() : json(res, 200, [])));
    expect(await client.listCampaigns()).toEqual([]);
    expect(service.hits).toHaveLength(2);
  });

  it('are not retried when a 2xx has the wrong shape', async () => {
    const { service, client } = await setup((_req, res) => json(res, 200, { unexpected: true }));
    expect((await failure(client.listCampaigns())).kind).toBe('server');
    expect(service.hits).toHaveLength(1);
  });

  it('writes other than make_call are not retried on 5xx', async () => {
    const { service, client } = await setup((_req, res) => json(res, 500, { message: 'Assistant creation failed' }));
    expect((await failure(client.createAssistant({ assistant_name: 'A' }))).kind).toBe('server');
    expect(service.hits).toHaveLength(1);
  });
});

describe('X-RateLimit headers', () => {
  it('tighten the budget to what the service says is left until its reset, and a 429 counts', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    const resetAt = Math.ceil(clock.now() / 1000) + 30; // epoch seconds, as the live service and the simulator send
    const { service, client } = await setup(
      (_req, res, _hit, i) =>
        i === 0
          ? json(res, 200, [], { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(resetAt) })
          : i === 1
            ? json(res, 429, { retry_after: 2 }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetAt + 600) })
            : json(res, 200, []),
      { clock },
    );
    await client.listCampaigns();
    // One left until the reset: the first read goes, the second waits for the reset.
    const first = client.listModels();
    const second = client.listCampaigns();
    await service.waitForHits(2);
    // The 429's own headers do not hold the budget for 10 minutes: its Retry-After (2 s) pauses it.
    await clock.advance(2_000);
    expect(client.budget.stats()).toMatchObject({ granted: 2, waiting: 2 });
    await clock.advance(28_000 - 1);
    expect(client.budget.stats()).toMatchObject({ granted: 2, waiting: 2 });
    await clock.advance(1);
    await Promise.all([first, second]);
    expect(service.hits).toHaveLength(4);
    expect(client.budget.stats()).toMatchObject({ granted: 4, rateLimited: 1 });
  });
});

describe('429 on reads', () => {
  async function waitsThenRetries(respond: Handler, expectedWaitMs: number): Promise<void> {
    const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
    let limited!: () => void;
    const sawLimit = new Promise<void>((r) => (limited = r));
    const { service, client } = await setup(
      (req, res, hit, i) => (i === 0 ? respond(req, res, hit, i) : json(res, 200, [{ id: '5', name: 'Spring', status: 'draft' }])),
      { clock, onRequest: (e) => e.kind === 'rate-limited' && limited() },
    );
    const result = client.listCampaigns();
    await sawLimit;
    expect(client.budget.stats()).toMatchObject({ granted: 1, waiting: 1, pausedUntil: clock.now() + expectedWaitMs });
    await clock.advance(expectedWaitMs - 1);
    expect(client.budget.stats()).toMatchObject({ granted: 1, waiting: 1 });
    await clock.advance(1);
    expect(client.budget.stats().granted).toBe(2);
    expect((await result)[0]).toMatchObject({ id: 5, name: 'Spring' });
    expect(service.hits).toHaveLength(2);
  }

  it('wait for the Retry-After header', async () => {
    await waitsThenRetries((_req, res) => json(res, 429, { retry_after: 60 }, { 'retry-after': '7' }), 7000);
  });

  it('wait for the body retry_after when there is no header', async () => {
    await waitsThenRetries((_req, res) => json(res, 429, { error: 'Rate limit exceeded', retry_after: 3 }), 3000);
  });

  it('wait 60 s when neither names a wait', async () => {
    await waitsThenRetries((_req, res) => json(res, 429, { message: 'Too many requests' }), 60_000);
  });
});

describe('page iterators', () => {
  const calls = Array.from({ length: 35 }, (_, i) => ({ id: String(i + 1), status: 'completed' }));

  it('walk the pagination envelope to the end', async () => {
    const { service, client } = await setup((req, res) => {
      const q = new URL(req.url ?? '', 'http://x').searchParams;
      const per = Number(q.get('per_page') ?? 15);
      const page = Number(q.get('page') ?? 1);
      const last = Math.ceil(calls.length / per);
      json(res, 200, {
        current_page: page,
        data: calls.slice((page - 1) * per, page * per),
        last_page: last,
        next_page_url: page < last ? `http://x/api/user/calls?page=${page + 1}` : null,
        per_page: per,
        total: calls.length,
      });
    });
    const ids: number[] = [];
    for await (const c of client.iterateCalls({ assistant_id: 3, per_page: 10 })) ids.push(c.id);
    expect(ids).toEqual(calls.map((_, i) => i + 1));
    expect(service.hits.map((h) => new URL(h.url, 'http://x').searchParams.get('page'))).toEqual(['1', '2', '3', '4']);
  });

  it('take a plain array of leads in one pass, and an envelope of leads page by page', async () => {
    const leads = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, phone_number: `+1415555${String(from + i).padStart(4, '0')}`, variables: [] }));
    const { service, client } = await setup((req, res) => {
      const q = new URL(req.url ?? '', 'http://x').searchParams;
      if (q.get('campaign_id') === '1') return json(res, 200, leads(1, 3));
      const page = Number(q.get('page') ?? 1);
      json(res, 200, { current_page: page, last_page: 2, next_page_url: page < 2 ? 'next' : null, data: leads(page * 100, 2) });
    });
    const plain: number[] = [];
    for await (const l of client.iterateLeads({ campaign_id: 1 })) plain.push(l.id);
    expect(plain).toEqual([1, 2, 3]);
    expect(service.hits).toHaveLength(1);
    const paged: number[] = [];
    for await (const l of client.iterateLeads({ campaign_id: 2 })) paged.push(l.id);
    expect(paged).toEqual([100, 101, 200, 201]);
    expect(service.hits).toHaveLength(3);
  });

  it('walk assistants', async () => {
    const { client } = await setup((req, res) => {
      const page = Number(new URL(req.url ?? '', 'http://x').searchParams.get('page') ?? 1);
      json(res, 200, { current_page: page, last_page: 2, next_page_url: null, data: [{ id: page, name: `A${page}` }] });
    });
    const names: string[] = [];
    for await (const a of client.iterateAssistants()) names.push(a.name);
    expect(names).toEqual(['A1', 'A2']);
  });
});

describe('token source', () => {
  it('a token that cannot be read is token-rejected and nothing is sent', async () => {
    service = await startFakeService((_req, res) => json(res, 200, []));
    client = createServiceClient({
      baseUrl: service.url,
      getToken: () => {
        throw new Error('ENOENT: token file');
      },
      clock: systemClock,
      logger: silentLogger(),
    });
    expect(await failure(client.makeCall({ phone_number: '+14155550100', assistant_id: 1 }))).toMatchObject({ kind: 'token-rejected', mayHaveBeenPlaced: false });
    expect(service.hits).toHaveLength(0);
  });
});

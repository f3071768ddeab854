import crypto from 'node:crypto';
import http from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { ManualClock } from '../../src/time/clock.js';
import { createMetrics, type Metrics } from '../../src/http/metrics.js';
import { startHttpServer, type HttpServerHandle, type Readiness } from '../../src/http/server.js';
import { secretMatches } from '../../src/http/secret.js';

const SECRET = 'whsec-correct-horse-battery';

interface Harness {
  base: string;
  port: number;
  metrics: Metrics;
  logs: string[];
  received: { payload: unknown; at: number }[];
  readiness: Readiness;
  secret: string | undefined;
  answer: { accepted: boolean; detail?: string } | Error;
}

let handles: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(handles.map((h) => h.close()));
  handles = [];
  vi.restoreAllMocks();
});

async function start(overrides: Partial<Pick<Harness, 'secret'>> = {}): Promise<Harness> {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const clock = new ManualClock(Date.UTC(2026, 2, 3, 10, 0, 0));
  const h: Harness = {
    base: '',
    port: 0,
    metrics: createMetrics(),
    logs,
    received: [],
    readiness: { ok: false, checks: { database: 'open', token: 'rejected (401)' } },
    secret: 'secret' in overrides ? overrides.secret : SECRET,
    answer: { accepted: true },
  };
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'debug' }, destination),
    metrics: h.metrics,
    clock,
    ready: async () => h.readiness,
    webhook: {
      secret: () => h.secret,
      handle: async (payload, at) => {
        if (h.answer instanceof Error) throw h.answer;
        h.received.push({ payload, at });
        return h.answer;
      },
    },
  });
  handles.push(server);
  h.port = server.port;
  h.base = `http://127.0.0.1:${server.port}`;
  return h;
}

/** Raw request through node:http, which reports a response even if the server stops reading early. */
function rawPost(port: number, path: string, body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    // The server may close while we still write; the answer is what matters.
    req.on('error', reject);
    req.end(body);
  });
}

const payload = { id: 1234569, customer_phone: '+4915112345678', status: 'completed', duration: 42 };

async function metricValue(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

describe('health, readiness, metrics', () => {
  it('GET /healthz answers 200 ok', async () => {
    const h = await start();
    const res = await fetch(`${h.base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz is 503 with the failing checks, then 200 once they pass', async () => {
    const h = await start();
    let res = await fetch(`${h.base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not ready', checks: { database: 'open', token: 'rejected (401)' } });
    h.readiness = { ok: true, checks: { database: 'open', token: 'accepted' } };
    res = await fetch(`${h.base}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ready', checks: { token: 'accepted' } });
  });

  it('GET /metrics serves Prometheus text with campaignd_ names', async () => {
    const h = await start();
    h.metrics.callsPlaced.inc({ campaign: 'spring' }, 3);
    h.metrics.callOutcomes.inc({ campaign: 'spring', class: 'success' });
    h.metrics.liveCalls.set({ campaign: 'spring' }, 2);
    h.metrics.apiRequests.inc({ endpoint: 'make_call', status: '200' });
    h.metrics.apiRateLimited.inc();
    h.metrics.rateBudgetWait.inc(1.5);
    h.metrics.attemptsUnknown.inc();
    const res = await fetch(`${h.base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('campaignd_calls_placed_total{campaign="spring"} 3');
    expect(text).toContain('campaignd_call_outcomes_total{campaign="spring",class="success"} 1');
    expect(text).toContain('campaignd_live_calls{campaign="spring"} 2');
    expect(text).toContain('campaignd_api_requests_total{endpoint="make_call",status="200"} 1');
    expect(text).toContain('campaignd_api_rate_limited_total 1');
    expect(text).toContain('campaignd_rate_budget_wait_seconds_total 1.5');
    expect(text).toContain('campaignd_attempts_unknown_total 1');
    expect(text).toContain('campaignd_process_cpu_user_seconds_total');
    // every sample line belongs to campaignd
    const samples = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(samples.every((l) => l.startsWith('campaignd_'))).toBe(true);
  });

  it('shows the daemon-wide max_calls_in_parallel only when it is set, and the live calls over all campaigns', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.daemonLiveCalls.set(7);
    m.setDaemonMaxCalls(undefined);
    let text = await m.registry.metrics();
    expect(text).toMatch(/^campaignd_daemon_live_calls 7$/m);
    expect(text).not.toContain('campaignd_daemon_max_calls_in_parallel');
    m.setDaemonMaxCalls(20);
    m.setDaemonMaxCalls(20);
    text = await m.registry.metrics();
    expect(text.match(/^campaignd_daemon_max_calls_in_parallel 20$/gm)).toHaveLength(1);
  });

  it('two metric sets never share a registry', () => {
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    expect(a.registry).not.toBe(b.registry);
  });

  it('unknown paths are 404 and wrong methods 405', async () => {
    const h = await start();
    expect((await fetch(`${h.base}/nope`)).status).toBe(404);
    const wrong = await fetch(`${h.base}/healthz`, { method: 'POST', body: '{}' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${h.base}/webhooks/post-call`)).status).toBe(405);
  });
});

describe('POST /webhooks/post-call', () => {
  it('accepts the right secret in the header and passes payload and receive time to the handler', async () => {
    const h = await start();
    const res = await fetch(`${h.base}/webhooks/post-call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Campaignd-Secret': SECRET },
      body: JSON.stringify(payload),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(h.received).toEqual([{ payload, at: Date.UTC(2026, 2, 3, 10, 0, 0) }]);
    expect(await metricValue(h.metrics, 'campaignd_webhook_deliveries_total', { result: 'accepted' })).toBe(1);
  });

  it('accepts the right secret in the query and never logs it', async () => {
    const h = await start();
    const res = await fetch(`${h.base}/webhooks/post-call?secret=${encodeURIComponent(SECRET)}`, { method: 'POST', body: JSON.stringify(payload) });
    expect(res.status).toBe(200);
    expect(h.received).toHaveLength(1);
    // a refused one with the secret-looking query, too
    await fetch(`${h.base}/webhooks/post-call?secret=${SECRET}x`, { method: 'POST', body: '{}' });
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.join('')).not.toContain(SECRET);
    expect(h.logs.join('')).not.toContain('secret=');
  });

  it('maps a declined delivery (unknown call id) to 202 with the detail', async () => {
    const h = await start();
    h.answer = { accepted: false, detail: 'no attempt matches call 99' };
    const res = await fetch(`${h.base}/webhooks/post-call`, { method: 'POST', headers: { 'x-campaignd-secret': SECRET }, body: '{"id":99}' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: false, detail: 'no attempt matches call 99' });
    expect(await metricValue(h.metrics, 'campaignd_webhook_deliveries_total', { result: 'unmatched' })).toBe(1);
  });

  it('refuses a wrong or missing secret with 401 and never calls the handler', async () => {
    const h = await start();
    const wrong = await fetch(`${h.base}/webhooks/post-call`, { method: 'POST', headers: { 'x-campaignd-secret': 'nope' }, body: '{}' });
    expect(wrong.status).toBe(401);
    const prefix = await fetch(`${h.base}/webhooks/post-call?secret=${SECRET.slice(0, -1)}`, { method: 'POST', body: '{}' });
    expect(prefix.status).toBe(401);
    const missing = await fetch(`${h.base}/webhooks/post-call`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(401);
    expect(h.received).toEqual([]);
    expect(await metricValue(h.metrics, 'campaignd_webhook_deliveries_total', { result: 'refused' })).toBe(3);
  });

  it('refuses every delivery with 503 when no secret is configured', async () => {
    const h = await start({ secret: undefined });
    const res = await fetch(`${h.base}/webhooks/post-call?secret=anything`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/no webhook secret is configured/);
    expect(h.received).toEqual([]);
  });

  it('answers 413 to a body one byte over 1 MiB, declared or chunked', async () => {
    const h = await start();
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const declared = await rawPost(h.port, '/webhooks/post-call', big, { 'x-campaignd-secret': SECRET });
    expect(declared.status).toBe(413);
    const chunked = await rawPost(h.port, '/webhooks/post-call', big, { 'x-campaignd-secret': SECRET, 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(413);
    // exactly 1 MiB of valid JSON is still read
    const exact = Buffer.concat([Buffer.from('{"pad":"'), Buffer.alloc(1024 * 1024 - 10, 0x61), Buffer.from('"}')]);
    expect(exact.length).toBe(1024 * 1024);
    const ok = await rawPost(h.port, '/webhooks/post-call', exact, { 'x-campaignd-secret': SECRET });
    expect(ok.status).toBe(200);
    expect(h.received).toHaveLength(1);
    expect(await metricValue(h.metrics, 'campaignd_webhook_deliveries_total', { result: 'invalid' })).toBe(2);
  });

  it('answers 400 to malformed JSON', async () => {
    const h = await start();
    const res = await fetch(`${h.base}/webhooks/post-call`, { method: 'POST', headers: { 'x-campaignd-secret': SECRET }, body: '{"id": 12,' });
    expect(res.status).toBe(400);
    expect(h.received).toEqual([]);
  });

  it('answers 500 when the handler throws, and keeps serving', async () => {
    const h = await start();
    h.answer = new Error('database is locked');
    const res = await fetch(`${h.base}/webhooks/post-call`, { method: 'POST', headers: { 'x-campaignd-secret': SECRET }, body: '{}' });
    expect(res.status).toBe(500);
    expect((await fetch(`${h.base}/healthz`)).status).toBe(200);
  });
});

describe('secret comparison', () => {
  it('compares sha256 digests with crypto.timingSafeEqual, whatever the lengths', () => {
    const spy = vi.spyOn(crypto, 'timingSafeEqual');
    expect(secretMatches(SECRET, SECRET)).toBe(true);
    expect(secretMatches('short', SECRET)).toBe(false);
    expect(secretMatches(`${SECRET}-longer`, SECRET)).toBe(false);
    expect(spy).toHaveBeenCalledTimes(3);
    for (const [a, b] of spy.mock.calls) {
      expect((a as Buffer).length).toBe(32);
      expect((b as Buffer).length).toBe(32);
    }
  });

  it('never matches when either side is missing or the expected secret is empty', () => {
    expect(secretMatches(undefined, SECRET)).toBe(false);
    expect(secretMatches(null, SECRET)).toBe(false);
    expect(secretMatches('', '')).toBe(false);
    expect(secretMatches('x', undefined)).toBe(false);
  });
});

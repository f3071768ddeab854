// The black-box fake must really behave as test/blackbox/README.md says, or the
// black-box scenarios would pass for the wrong reason: a fake that never drops an
// answer, never limits, or writes UTC after all, tests nothing. Each claim is checked
// here over real HTTP against the child process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { startFake, type FakeService } from './fake-fixture.js';

const TOKEN = 'fake-selftest-token';
const auth = { authorization: `Bearer ${TOKEN}`, accept: 'application/json', 'content-type': 'application/json' };
const servers: http.Server[] = [];

afterEach(async () => {
  await stopAllProcesses();
  for (const s of servers.splice(0)) s.close();
});

async function makeCall(fake: FakeService, phone: string): Promise<Response> {
  return fetch(`${fake.url}/api/user/make_call`, { method: 'POST', headers: auth, body: JSON.stringify({ phone_number: phone, assistant_id: fake.assistantId, variables: {} }) });
}

/** A webhook receiver on loopback that keeps every body it gets. */
async function receiver(): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

describe('the black-box fake service', () => {
  it('places a call with no call_id, moves it to a final status, and posts a webhook without answered_by in the server zone', async () => {
    const fake = await startFake({ token: TOKEN, seed: 3, rateLimit: 'off', outcomes: 'human=1', serverTimezone: 'America/Santiago' });
    const hook = await receiver();
    const put = await fetch(`${fake.url}/api/user/assistant/${fake.assistantId}`, { method: 'PUT', headers: auth, body: JSON.stringify({ is_webhook_active: true, webhook_url: hook.url }) });
    expect(put.status).toBe(200);

    const res = await makeCall(fake, '+15552000100');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: 'Call initiated successfully', data: {} });
    await waitUntil(() => hook.bodies.length === 1, { timeoutMs: 10_000, message: 'the post-call webhook' });
    const [call] = await fake.calls();
    expect(call!.timeline.map((t) => t.status)).toEqual(['initiated', 'ringing', 'in-progress', call!.status]);
    expect(['completed', 'ended_by_customer']).toContain(call!.status);
    expect(call!.answered_by).toBe('human');

    const body = hook.bodies[0]!;
    expect(body).not.toHaveProperty('answered_by');
    expect(body.id).toBe(call!.id);
    expect(typeof body.id).toBe('string');
    expect(Array.isArray(body.transcript)).toBe(true);
    // Zone-less, and on the wall clock of the server's zone, not UTC.
    const local = DateTime.fromFormat(String(body.created_at), 'yyyy-MM-dd HH:mm:ss', { zone: 'America/Santiago' });
    expect(local.toMillis()).toBe(Math.floor(call!.created_at_ms / 1000) * 1000);
    expect(String(body.created_at)).not.toBe(DateTime.fromMillis(call!.created_at_ms, { zone: 'UTC' }).toFormat('yyyy-MM-dd HH:mm:ss'));
  });

  it('lists calls newest first in pages that keep only `page` in their URLs, ids as strings, variables as []', async () => {
    const fake = await startFake({ token: TOKEN, seed: 4, rateLimit: 'off', ringMs: '5000-5000' });
    for (let i = 0; i < 5; i++) expect((await makeCall(fake, `+1555200020${i}`)).status).toBe(200);
    const recorded = await fake.calls();
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await fetch(`${fake.url}/api/user/calls?assistant_id=${fake.assistantId}&per_page=2&page=${page}`, { headers: auth });
      const env = (await res.json()) as { data: { id: unknown; variables: unknown }[]; next_page_url: string | null; last_page: number; total: number };
      expect(env.total).toBe(5);
      expect(env.last_page).toBe(3);
      if (page < 3) expect(env.next_page_url).toBe(`${fake.url}/api/user/calls?page=${page + 1}`);
      for (const c of env.data) {
        expect(typeof c.id).toBe('string');
        expect(c.variables).toEqual([]);
        seen.push(String(c.id));
      }
    }
    expect((await fake.stats()).call_list_pages).toEqual({ 1: 1, 2: 1, 3: 1 });
    // Pages partition the calls newest first (the order inside a page is shuffled).
    const newestFirst = [...recorded].sort((a, b) => b.created_at_ms - a.created_at_ms).map((c) => c.id);
    for (let p = 0; p < 3; p++) expect(new Set(seen.slice(p * 2, p * 2 + 2))).toEqual(new Set(newestFirst.slice(p * 2, p * 2 + 2)));
  });

  it('answers a bad token with a 302 to a login page', async () => {
    const fake = await startFake({ token: TOKEN, seed: 1 });
    const res = await fetch(`${fake.url}/api/user/assistants/outbound`, { headers: { ...auth, authorization: 'Bearer wrong' }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${fake.url}/login`);
    expect((await fake.stats()).redirects).toBe(1);
    await (await fetch(res.headers.get('location')!)).arrayBuffer();
    expect((await fake.stats()).login_page_views).toBe(1);
  });

  it('limits to 20 requests per 10 s with a body retry_after and X-RateLimit headers, counting what it refused', async () => {
    const fake = await startFake({ token: TOKEN, seed: 1, rateLimit: '100/min' });
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 21; i++) {
      const res = await fetch(`${fake.url}/api/user/assistants/outbound`, { headers: auth });
      statuses.push(res.status);
      if (res.status === 429) refused = res;
      else await res.arrayBuffer();
    }
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(refused).toBeDefined();
    expect(refused!.headers.get('retry-after')).toBeNull();
    expect(refused!.headers.get('x-ratelimit-limit')).toBe('100');
    const body = (await refused!.json()) as { retry_after: number };
    expect(body.retry_after).toBeGreaterThanOrEqual(1);
    expect(body.retry_after).toBeLessThanOrEqual(10);
    expect((await fake.stats()).rate_limited).toBe(1);
  });

  it('resets connections before creating a call, drops make_call answers after creating one, and keeps faults off /api/user', async () => {
    const fake = await startFake({ token: TOKEN, seed: 1, rateLimit: 'off' });
    await fake.setWaves([{ rules: [{ reset: 1 }] }]);
    await expect(makeCall(fake, '+15552000300')).rejects.toThrow();
    expect(await fake.calls()).toHaveLength(0);

    await fake.setWaves([{ rules: [{ path: '/api/user/make_call', drop_after_create: 1 }] }]);
    await expect(makeCall(fake, '+15552000301')).rejects.toThrow();
    const calls = await fake.calls();
    expect(calls.map((c) => [c.client_phone_number, c.answer_dropped])).toEqual([['+15552000301', true]]);
    expect((await fake.stats()).injected).toMatchObject({ reset: 1, drop_after_create: 1 });

    await fake.setWaves([{ rules: [{ rate_limited_header: 1, retry_after: 3 }] }]);
    const limited = await fetch(`${fake.url}/api/user/assistants/outbound`, { headers: auth });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).not.toHaveProperty('retry_after');
    // `times`: the rule answers that many requests, then stands aside.
    await fake.setWaves([{ rules: [{ rate_limited_body: 1, retry_after: 2, times: 1 }] }]);
    const once = await fetch(`${fake.url}/api/user/assistants/outbound`, { headers: auth });
    expect([once.status, once.headers.get('retry-after'), ((await once.json()) as { retry_after: number }).retry_after]).toEqual([429, null, 2]);
    expect((await fetch(`${fake.url}/api/user/assistants/outbound`, { headers: auth })).status).toBe(200);
    // The controls live on their own port only.
    expect((await fetch(`${fake.url}/calls`)).status).toBe(404);
  });
});

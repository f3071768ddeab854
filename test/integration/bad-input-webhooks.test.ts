// Bad input, post-call webhook bodies, sent to the HTTP surface of a running daemon
// (startApp, real sockets). Each hostile delivery gets its clear refusal (status and
// body) and changes nothing; then a good delivery for a live call is applied and the
// engine places the next call — the daemon kept running and no lead went missing.
// Time runs at real speed with hour-long calls, so nothing moves unless a webhook moves it.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_SECRET, goodCampaign, leadCsv, startDaemon, type Daemon } from '../fixtures/bad-input/daemon-harness.js';
import { waitUntil } from '../helpers/wait.js';
import { capturingLogger } from './client-fixture.js';

const LEADS = 90;
let daemon: Daemon;
const logs = capturingLogger();

interface LiveCall {
  attemptId: number;
  callId: string;
  phone: string;
}

async function liveCalls(): Promise<LiveCall[]> {
  const rows = await daemon.app.db.selectFrom('attempts').select(['id', 'call_id', 'phone_number', 'state']).where('state', 'in', ['dialing', 'placed', 'unknown']).orderBy('id').execute();
  return rows.filter((r) => r.state === 'placed' && r.call_id !== null).map((r) => ({ attemptId: r.id, callId: r.call_id!, phone: r.phone_number }));
}

/** Waits until both slots hold a placed call with its id (the engine has nothing left to do). */
async function settled(): Promise<LiveCall[]> {
  await waitUntil(
    async () => {
      const all = await daemon.app.db.selectFrom('attempts').select('state').where('state', 'in', ['dialing', 'placed', 'unknown']).execute();
      return all.length === 2 && (await liveCalls()).length === 2;
    },
    { message: 'two placed calls' },
  );
  return liveCalls();
}

async function snapshot(): Promise<unknown> {
  const leads = await daemon.app.db.selectFrom('leads').select(['id', 'phone_number', 'state', 'state_reason', 'contact_attempts', 'next_due_at']).orderBy('id').execute();
  const attempts = await daemon.app.db.selectFrom('attempts').select(['id', 'lead_id', 'state', 'outcome', 'call_id', 'call_status']).orderBy('id').execute();
  return { leads, attempts };
}

interface Sent {
  status: number;
  body: string;
}

interface Delivery {
  body: string | Buffer;
  /** `?secret=` value; null: none. Default: the right one. */
  query?: string | null;
  headers?: Record<string, string>;
  method?: string;
  /** Send without Content-Length (chunked). */
  chunked?: boolean;
}

/** One raw HTTP request to the webhook path (raw, so that any bytes and framing can be sent). */
function deliver(d: Delivery): Promise<Sent> {
  const query = d.query === undefined ? `?secret=${encodeURIComponent(DAEMON_SECRET)}` : d.query === null ? '' : `?secret=${encodeURIComponent(d.query)}`;
  const body = typeof d.body === 'string' ? Buffer.from(d.body) : d.body;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: daemon.app.httpPort!,
        path: `/webhooks/post-call${query}`,
        method: d.method ?? 'POST',
        headers: { 'content-type': 'application/json', ...(d.chunked ? {} : { 'content-length': String(body.length) }), ...d.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    // A refused oversized body may close the socket before all of it was written.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    if (d.chunked) {
      for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(body);
  });
}

const final = (call: LiveCall, status = 'busy', extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ id: Number(call.callId), customer_phone: call.phone, status, duration: 0, created_at: null, finished_at: null, ...extra });

/** The proof that the daemon still works: a good final webhook is applied and the next call goes out. */
async function expectStillRunning(): Promise<void> {
  const [call] = await settled();
  const before = await daemon.app.db.selectFrom('attempts').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
  const sent = await deliver({ body: final(call!) });
  expect(sent.status).toBe(200);
  expect(JSON.parse(sent.body)).toEqual({ ok: true, detail: 'applied' });
  const after = await settled();
  expect(after.some((c) => c.attemptId > before.id)).toBe(true);
  expect(await daemon.leadStates('hooks')).toHaveLength(LEADS);
}

interface WebhookCase {
  name: string;
  /** Runs first (e.g. the first of two deliveries); the snapshot is taken after it. */
  prepare?: (call: LiveCall) => Promise<void>;
  delivery: (call: LiveCall) => Delivery;
  status: number;
  body: RegExp;
}

const MIB = 1024 * 1024;
const applied = async (call: LiveCall): Promise<void> => {
  expect((await deliver({ body: final(call) })).status).toBe(200);
  await settled();
};

const cases: WebhookCase[] = [
  // Not JSON.
  { name: 'malformed JSON', delivery: () => ({ body: '{"id": 12, "status": ' }), status: 400, body: /body is not valid JSON/ },
  { name: 'truncated mid-string', delivery: (c) => ({ body: final(c).slice(0, 20) }), status: 400, body: /body is not valid JSON/ },
  { name: 'empty body', delivery: () => ({ body: '' }), status: 400, body: /body is not valid JSON/ },
  { name: 'form-encoded body', delivery: (c) => ({ body: `id=${c.callId}&status=busy`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }), status: 400, body: /body is not valid JSON/ },
  { name: 'JSON with trailing garbage', delivery: (c) => ({ body: `${final(c)}}}` }), status: 400, body: /body is not valid JSON/ },
  { name: 'two JSON documents', delivery: (c) => ({ body: `${final(c)}\n${final(c)}` }), status: 400, body: /body is not valid JSON/ },
  { name: 'binary junk', delivery: () => ({ body: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x7b, 0x22]) }), status: 400, body: /body is not valid JSON/ },
  { name: 'NaN literal', delivery: (c) => ({ body: `{"id": ${c.callId}, "status": "busy", "duration": NaN}` }), status: 400, body: /body is not valid JSON/ },
  // Too large.
  { name: 'oversized with Content-Length', delivery: () => ({ body: Buffer.alloc(2 * MIB, 0x20) }), status: 413, body: /body larger than 1048576 bytes/ },
  { name: 'oversized, chunked', delivery: () => ({ body: Buffer.alloc(2 * MIB, 0x20), chunked: true }), status: 413, body: /body larger than 1048576 bytes/ },
  { name: 'a real payload padded past the limit', delivery: (c) => ({ body: final(c, 'busy', { transcript: 'x'.repeat(MIB) }) }), status: 413, body: /body larger than/ },
  // Secret.
  { name: 'wrong secret', delivery: (c) => ({ body: final(c), query: 'not-the-secret' }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'missing secret', delivery: (c) => ({ body: final(c), query: null }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'empty secret', delivery: (c) => ({ body: final(c), query: '' }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'secret in other case', delivery: (c) => ({ body: final(c), query: DAEMON_SECRET.toUpperCase() }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'secret with a suffix', delivery: (c) => ({ body: final(c), query: `${DAEMON_SECRET}x` }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'wrong secret in the header beats a right query', delivery: (c) => ({ body: final(c), headers: { 'x-campaignd-secret': 'nope' } }), status: 401, body: /wrong or missing webhook secret/ },
  { name: 'oversized body with a wrong secret', delivery: () => ({ body: Buffer.alloc(2 * MIB, 0x20), query: 'nope' }), status: 401, body: /wrong or missing webhook secret/ },
  // Well-formed JSON, not a post-call webhook.
  { name: 'empty object', delivery: () => ({ body: '{}' }), status: 400, body: /invalid payload: id: / },
  { name: 'array body', delivery: (c) => ({ body: `[${final(c)}]` }), status: 400, body: /invalid payload: body: / },
  { name: 'JSON null', delivery: () => ({ body: 'null' }), status: 400, body: /invalid payload: body: / },
  { name: 'JSON string', delivery: () => ({ body: '"completed"' }), status: 400, body: /invalid payload: body: / },
  { name: 'JSON number', delivery: () => ({ body: '42' }), status: 400, body: /invalid payload: body: / },
  { name: 'status a number', delivery: (c) => ({ body: final(c, 'busy', { status: 3 }) }), status: 400, body: /invalid payload: status: / },
  { name: 'status missing', delivery: (c) => ({ body: JSON.stringify({ id: Number(c.callId), customer_phone: c.phone }) }), status: 400, body: /invalid payload: status: / },
  { name: 'id an object', delivery: (c) => ({ body: final(c, 'busy', { id: { value: c.callId } }) }), status: 400, body: /invalid payload: id: / },
  { name: 'id negative', delivery: (c) => ({ body: final(c, 'busy', { id: -Number(c.callId) }) }), status: 400, body: /invalid payload: id: / },
  { name: 'id a fraction', delivery: (c) => ({ body: final(c, 'busy', { id: Number(c.callId) + 0.5 }) }), status: 400, body: /invalid payload: id: / },
  { name: 'id a word', delivery: (c) => ({ body: final(c, 'busy', { id: 'abc' }) }), status: 400, body: /invalid payload: id: / },
  { name: 'customer_phone a number', delivery: (c) => ({ body: final(c, 'busy', { customer_phone: 12025550000 }) }), status: 400, body: /invalid payload: customer_phone: / },
  { name: 'duration a word', delivery: (c) => ({ body: final(c, 'busy', { duration: 'long' }) }), status: 400, body: /invalid payload: duration: / },
  { name: 'deeply nested arrays', delivery: () => ({ body: `{"id": 99999995, "status": "busy", "extracted_variables": ${'['.repeat(1000)}${']'.repeat(1000)}}` }), status: 202, body: /unknown-call/ },
  { name: 'half a million nested arrays', delivery: () => ({ body: `{"id": 1, "status": "busy", "lead": ${'['.repeat(500_000)}${']'.repeat(500_000)}}` }), status: 400, body: /invalid payload: lead: / },
  // Understood, nothing to apply.
  { name: 'unknown call id', delivery: (c) => ({ body: final(c, 'busy', { id: 99_999_999, customer_phone: '+19995550000' }) }), status: 202, body: /unknown-call/ },
  { name: 'unknown call id, phone null', delivery: (c) => ({ body: final(c, 'busy', { id: 99_999_998, customer_phone: null }) }), status: 202, body: /unknown-call/ },
  { name: 'another call id on a live number', delivery: (c) => ({ body: final(c, 'busy', { id: 99_999_997 }) }), status: 202, body: /unknown-call/ },
  { name: '__proto__ keys', delivery: () => ({ body: '{"__proto__": {"accepted": true}, "id": 99999996, "status": "busy", "customer_phone": null}' }), status: 202, body: /unknown-call/ },
  { name: 'duplicate final webhook', prepare: applied, delivery: (c) => ({ body: final(c) }), status: 202, body: /duplicate/ },
  { name: 'a different final status after the final one', prepare: applied, delivery: (c) => ({ body: final(c, 'completed', { duration: 40 }) }), status: 202, body: /duplicate/ },
  { name: 'in-progress after the final one', prepare: applied, delivery: (c) => ({ body: final(c, 'in-progress') }), status: 202, body: /duplicate/ },
  { name: 'ringing after the final one', prepare: applied, delivery: (c) => ({ body: final(c, 'ringing') }), status: 202, body: /duplicate/ },
  { name: 'id as a string after the final one', prepare: applied, delivery: (c) => ({ body: final(c, 'busy', { id: ` ${c.callId} ` }) }), status: 202, body: /duplicate/ },
  // Wrong method and path.
  { name: 'GET on the webhook path', delivery: () => ({ body: '', method: 'GET' }), status: 405, body: /method GET not allowed on \/webhooks\/post-call/ },
  { name: 'PUT with a good body', delivery: (c) => ({ body: final(c), method: 'PUT' }), status: 405, body: /method PUT not allowed/ },
];

describe('bad input: webhook bodies through the HTTP surface of a running daemon', () => {
  beforeAll(async () => {
    daemon = await startDaemon({
      campaigns: { 'hooks.yaml': goodCampaign('hooks', '../leads/hooks.csv') },
      leads: { 'hooks.csv': leadCsv(LEADS) },
      scale: 5,
      callDurationSeconds: { min: 3000, max: 3600 },
      logger: logs.logger,
    });
    await settled();
  });
  afterAll(async () => {
    await daemon.close();
  });

  it.each(cases)('$name → $status', async (c) => {
    const [target] = await settled();
    if (c.prepare) await c.prepare(target!);
    const before = await snapshot();
    const sent = await deliver(c.delivery(target!));
    expect(sent.status).toBe(c.status);
    expect(sent.body).toMatch(c.body);
    // Nothing changed, and nothing moves on its own in the meantime.
    expect(await snapshot()).toEqual(before);
    await expectStillRunning();
  });

  it('no secret, given or expected, reaches the log; every refusal was logged with its reason', async () => {
    const text = logs.lines.join('');
    expect(text).not.toContain(DAEMON_SECRET);
    expect(text).not.toContain('not-the-secret');
    expect(text).toMatch(/post-call webhook refused: wrong or missing secret/);
    expect(text).toMatch(/post-call webhook refused: body too large/);
    expect(text).toMatch(/post-call webhook refused: body is not JSON/);
    expect(text).toMatch(/"detail":"invalid payload: status: [^"]+","msg":"post-call webhook refused: not a post-call webhook payload"/);
  });

  it('the metrics count the refusals by kind', async () => {
    const text = await (await fetch(`http://127.0.0.1:${daemon.app.httpPort}/metrics`)).text();
    for (const result of ['refused', 'invalid', 'unmatched', 'accepted']) {
      expect(text).toMatch(new RegExp(`webhook[a-z_]*\\{result="${result}"\\} [1-9]`));
    }
  });
});

describe('bad input: a final webhook for a call whose make_call answer has not arrived', () => {
  it('is applied to the dialing attempt; the late answer reopens nothing and nobody is called twice', async () => {
    const early = '+12025551000';
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let answered = false;
    const d = await startDaemon({
      campaigns: { 'early.yaml': goodCampaign('early', '../leads/early.csv') },
      leads: { 'early.csv': leadCsv(4) },
      scale: 600,
      callDurationSeconds: { min: 30, max: 60 },
      wrapClient: (inner) => ({
        ...inner,
        async makeCall(req, opts) {
          const answer = await inner.makeCall(req, opts);
          if (req.phone_number === early) {
            await held;
            answered = true;
          }
          return answer;
        },
      }),
    });
    try {
      await waitUntil(() => [...d.sim.state.calls.values()].some((c) => c.client_phone_number === early), { message: 'the early call at the simulator' });
      const simCall = [...d.sim.state.calls.values()].find((c) => c.client_phone_number === early)!;
      const attempt = await d.app.db.selectFrom('attempts').selectAll().where('phone_number', '=', early).executeTakeFirstOrThrow();
      expect(attempt).toMatchObject({ state: 'dialing', call_id: null });
      const res = await fetch(d.webhookUrl, { method: 'POST', body: JSON.stringify({ id: simCall.id, customer_phone: early, status: 'busy', duration: 0, created_at: null }) });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, detail: 'applied' });
      release();
      await waitUntil(() => answered, { message: 'the held make_call answer' });
      await d.waitCampaignDone('early');
      const attempts = await d.app.db.selectFrom('attempts').selectAll().where('phone_number', '=', early).execute();
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ state: 'ended', outcome: 'busy', outcome_source: 'webhook' });
      expect(d.simCallsTo([early])).toBe(1);
      expect(await d.leadStates('early')).toEqual(['reached-max-retries', 'completed', 'completed', 'completed']);
    } finally {
      release();
      await d.close();
    }
  });
});

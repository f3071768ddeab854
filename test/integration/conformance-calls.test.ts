import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServiceTime, postCallWebhookSchema } from '../../src/service/schema/records.js';
import { parseRateLimit } from '../../src/simulator/rate-limit.js';
import { clientFor, failure, startTestSim } from './simulator-fixture.js';

// Spec sections 2.6, 2.9, 4.7, 4.8 and 5, the live service's reported make_call answers (docs/simulator.md), and
// isolation between two tokens, with the client against the simulator over real HTTP.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: Parameters<typeof startTestSim>[0] = {}) {
  const t = await startTestSim(opts);
  const client = clientFor(t.sim.url, 'tok-a');
  const other = clientFor(t.sim.url, 'tok-b');
  cleanups.push(() => t.sim.close(), () => client.close(), () => other.close());
  const assistantId = (await client.listOutboundAssistants())[0]!.id;
  return { ...t, client, other, assistantId };
}

describe('4.7 make a call', () => {
  it('answers {message, data: {}} and the call appears in the list, initiated', async () => {
    const { client, a, assistantId, clock } = await setup();
    const raw = await a.post('/api/user/make_call', { phone_number: '+4915112345001', assistant_id: assistantId, variables: { name: 'Ada' } });
    expect(raw).toMatchObject({ status: 200, body: { message: 'Call initiated successfully', data: {} } });
    const placed = await client.makeCall({ phone_number: '+4915112345002', assistant_id: assistantId });
    expect(placed).toMatchObject({ message: 'Call initiated successfully', callId: null });
    const page = await client.listCalls();
    expect(page.total).toBe(2);
    const call = page.items.find((c) => c.client_phone_number === '+4915112345002')!;
    expect(call).toMatchObject({ status: 'initiated', type: 'outbound', assistant_name: 'Outbound Sales' });
    expect(call.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(parseServiceTime(call.created_at, 'UTC')).toBe(Math.floor(clock.now() / 1000) * 1000);
  });

  it('gives call_id (as the public docs show) when configured, and the client keeps it', async () => {
    const { client, assistantId } = await setup({ callIdInResponse: true });
    const placed = await client.makeCall({ phone_number: '+4915112345003', assistant_id: assistantId });
    expect(placed.callId).toMatch(/^\d+$/);
    expect((await client.listCalls()).items[0]!.id).toBe(Number(placed.callId));
  });

  it('400 for a number not in E.164, 404 for a missing, foreign or inbound assistant', async () => {
    const { client, a, sim, assistantId } = await setup();
    for (const bad of ['015112345678', '+0151123456', '+49 151 1234', '+491']) {
      const res = await a.post('/api/user/make_call', { phone_number: bad, assistant_id: assistantId });
      expect(res.status, bad).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    const rejected = await failure(client.makeCall({ phone_number: '12345', assistant_id: assistantId }));
    expect(rejected).toMatchObject({ kind: 'rejected', status: 400, mayHaveBeenPlaced: false });
    const foreign = sim.state.allOf(sim.state.assistants, sim.state.users[1]!.id)[0]!.id;
    const inbound = sim.state.allOf(sim.state.assistants, sim.state.users[0]!.id).find((x) => x.fields.type === 'inbound')!.id;
    for (const id of [999999, foreign, inbound]) {
      const res = await a.post('/api/user/make_call', { phone_number: '+4915112345004', assistant_id: id });
      expect(res).toMatchObject({ status: 404, body: { message: 'Assistant not found' } });
    }
    expect((await failure(client.makeCall({ phone_number: '+4915112345004', assistant_id: foreign }))).kind).toBe('not-found');
    expect(sim.state.calls.size).toBe(0);
  });

  it('a dropped connection after creation and a 5xx are "may have been placed"; a 429 is not', async () => {
    const { client, controls, sim, assistantId } = await setup();
    await controls.post('/__sim/faults', { path: '/api/user/make_call', drop_after_create: 1 });
    const dropped = await failure(client.makeCall({ phone_number: '+4915112345005', assistant_id: assistantId }));
    expect(dropped).toMatchObject({ kind: 'network', mayHaveBeenPlaced: true });
    expect(sim.state.calls.size).toBe(1);
    await controls.post('/__sim/reset-faults');
    await controls.post('/__sim/faults', { path: '/api/user/make_call', server_error: 1, server_status: 502 });
    expect(await failure(client.makeCall({ phone_number: '+4915112345006', assistant_id: assistantId }))).toMatchObject({ kind: 'server', status: 502, mayHaveBeenPlaced: true });
    await controls.post('/__sim/reset-faults');
    await controls.post('/__sim/faults', { path: '/api/user/make_call', rate_limited: 1, retry_after: 3 });
    expect(await failure(client.makeCall({ phone_number: '+4915112345007', assistant_id: assistantId }))).toMatchObject({ kind: 'rate-limited', retryAfterMs: 3000, mayHaveBeenPlaced: false });
    expect(sim.state.calls.size).toBe(1);
  });
});

describe('4.8 list calls and 2.9 the pagination envelope', () => {
  it('envelope fields exactly, page URLs with page, default 15 per page, bounds 1–100', async () => {
    const { client, a, assistantId } = await setup();
    for (let i = 0; i < 17; i++) await client.makeCall({ phone_number: `+49151123460${String(i).padStart(2, '0')}`, assistant_id: assistantId });
    const first = await a.get('/api/user/calls');
    expect(Object.keys(first.body).sort()).toEqual(
      ['current_page', 'data', 'first_page_url', 'from', 'last_page', 'last_page_url', 'links', 'next_page_url', 'path', 'per_page', 'prev_page_url', 'to', 'total'].sort(),
    );
    expect(first.body).toMatchObject({ current_page: 1, per_page: 15, from: 1, to: 15, last_page: 2, total: 17, prev_page_url: null });
    expect(first.body.data).toHaveLength(15);
    expect(new URL(first.body.next_page_url).searchParams.get('page')).toBe('2');
    expect(new URL(first.body.first_page_url).searchParams.get('page')).toBe('1');
    expect(new URL(first.body.last_page_url).searchParams.get('page')).toBe('2');
    for (const l of first.body.links) {
      expect(typeof l.label).toBe('string');
      expect(typeof l.active).toBe('boolean');
      expect(l.url === null || typeof l.url === 'string').toBe(true);
    }
    const second = await a.get(new URL(first.body.next_page_url).pathname + new URL(first.body.next_page_url).search);
    expect(second.body).toMatchObject({ current_page: 2, from: 16, to: 17, next_page_url: null });
    expect(second.body.data).toHaveLength(2);
    const rec = first.body.data[0];
    expect(Object.keys(rec).sort()).toEqual(
      ['id', 'assistant_name', 'campaign_name', 'type', 'duration', 'assistant_phone_number', 'client_phone_number', 'status', 'transcript', 'variables', 'evaluation', 'webhook_response', 'carrier_cost', 'total_cost', 'answered_by', 'recording_url', 'created_at', 'updated_at'].sort(),
    );
    for (const per of [0, 101, 'x']) expect((await a.get(`/api/user/calls?per_page=${per}`)).status).toBe(422);
    expect((await a.get('/api/user/calls?per_page=1')).body.last_page).toBe(17);
    expect((await a.get('/api/user/calls?per_page=100')).body.data).toHaveLength(17);
    const all = [];
    for await (const c of client.iterateCalls({ per_page: 4 })) all.push(c.id);
    expect(new Set(all).size).toBe(17);
  });

  it('filters by status, type, phone_number, assistant_id, campaign_id and dates', async () => {
    const { client, a, clock, controls, assistantId } = await setup();
    const campaignId = (await client.listCampaigns())[0]!.id;
    await client.createLead({ phone_number: '+4915112345101', campaign_id: campaignId });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345101', status: 'busy' });
    await client.makeCall({ phone_number: '+4915112345101', assistant_id: assistantId });
    await clock.advance(3 * 86_400_000); // three days later
    await client.makeCall({ phone_number: '+4915112345102', assistant_id: assistantId });
    await clock.advance(60_000);
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const q = async (query: Record<string, string | number>) => (await client.listCalls(query as never)).items.map((c) => c.client_phone_number);
    expect(await q({ status: 'busy' })).toEqual(['+4915112345101']);
    expect(await q({ type: 'inbound' })).toEqual([]);
    expect(await q({ type: 'outbound' })).toHaveLength(2);
    expect(await q({ phone_number: '+4915112345102' })).toEqual(['+4915112345102']);
    expect(await q({ assistant_id: assistantId })).toHaveLength(2);
    expect(await q({ assistant_id: 999999 })).toEqual([]);
    expect(await q({ campaign_id: campaignId })).toEqual(['+4915112345101']);
    expect(await q({ date_from: today })).toEqual(['+4915112345102']);
    expect(await q({ date_to: today, date_from: '2000-01-01' })).toHaveLength(2);
    expect((await a.get('/api/user/calls?status=done')).status).toBe(422);
    expect((await a.get('/api/user/calls?date_from=2026-13-01')).status).toBe(422);
    expect((await a.get('/api/user/calls?type=fax')).body.errors.type).toBeDefined();
    const busy = (await client.listCalls({ status: 'busy' })).items[0]!;
    expect(busy).toMatchObject({ campaign_name: 'Default campaign', duration: 0 });
  });
});

describe('5 authentication and isolation between two tokens', () => {
  it('reports a bad token (401 or a 302 login redirect) as token-rejected', async () => {
    const { sim } = await setup();
    const bad = clientFor(sim.url, 'wrong');
    cleanups.push(() => bad.close());
    expect((await failure(bad.listCampaigns())).kind).toBe('token-rejected');
    const t = await startTestSim({ badTokenAnswer: 'redirect302' });
    const bad2 = clientFor(t.sim.url, 'wrong');
    cleanups.push(() => t.sim.close(), () => bad2.close());
    expect((await failure(bad2.listCalls())).kind).toBe('token-rejected');
  });

  it('each token sees only its own calls, leads, tools and assistants', async () => {
    const { client, other, assistantId } = await setup();
    await client.makeCall({ phone_number: '+4915112345201', assistant_id: assistantId });
    const campaignA = (await client.listCampaigns())[0]!.id;
    await client.createLead({ phone_number: '+4915112345201', campaign_id: campaignA });
    expect((await other.listCalls()).total).toBe(0);
    expect((await other.listLeads()).items).toEqual([]);
    expect((await other.listCampaigns()).map((c) => c.id)).not.toContain(campaignA);
    const mine = (await client.listAssistants()).items.map((x) => x.id);
    const theirs = (await other.listAssistants()).items.map((x) => x.id);
    expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
    expect((await failure(other.makeCall({ phone_number: '+4915112345202', assistant_id: assistantId }))).kind).toBe('not-found');
  });

  it('rate-limit emulation: the client sees rate-limited with the wait named', async () => {
    const { a, client } = await setup({ rateLimit: parseRateLimit('100/min') });
    for (let i = 0; i < 20; i++) await a.get('/api/user/campaigns');
    const err = await failure(client.makeCall({ phone_number: '+4915112345301', assistant_id: 1 }));
    expect(err.kind).toBe('rate-limited');
    expect(err.retryAfterMs).toBeGreaterThan(0);
  });
});

describe('post-call webhook payload parses with the shared schema', () => {
  it('delivers a payload the daemon-side schema accepts', async () => {
    const bodies: unknown[] = [];
    const receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(text));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => receiver.close(() => r())));
    const { client, sim, clock, assistantId } = await setup();
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await client.updateAssistant(assistantId, { is_webhook_active: true, webhook_url: url } as never);
    await client.makeCall({ phone_number: '+4915112345401', assistant_id: assistantId });
    await clock.advance(30 * 60_000);
    await sim.state.settled();
    expect(bodies).toHaveLength(1);
    const parsed = postCallWebhookSchema.parse(bodies[0]);
    expect(parsed.customer_phone).toBe('+4915112345401');
    expect((await client.listCalls()).items[0]!.webhook_response).toEqual({ status: 204, body: null });
  });
});

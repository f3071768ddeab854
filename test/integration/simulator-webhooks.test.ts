import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { outboundAssistantId, startTestSim } from './simulator-fixture.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

interface Receiver {
  url: string;
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

/** A local webhook receiver that answers 200 `{received: n}`. */
async function startReceiver(): Promise<Receiver> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: bodies.length }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const rec = {
    url: `http://127.0.0.1:${port}/webhooks/post-call?secret=s3cret`,
    bodies,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  open.push(rec);
  return rec;
}

async function setup() {
  const t = await startTestSim();
  open.push(t.sim as RunningSimulator);
  const assistantId = await outboundAssistantId(t.a);
  const receiver = await startReceiver();
  return { ...t, assistantId, receiver };
}

describe('post-call webhooks', () => {
  it('delivers the post-call payload the live service sends and keeps the receiver answer as webhook_response', async () => {
    const { a, clock, sim, controls, assistantId, receiver } = await setup();
    const campaignId = (await a.get('/api/user/campaigns')).body[0].id;
    await a.post('/api/user/lead', { phone_number: '+4915112345678', campaign_id: campaignId, variables: { name: 'Ada' } });
    const upd = await a.put(`/api/user/assistant/${assistantId}`, {
      is_webhook_active: true,
      webhook_url: receiver.url,
      include_recording_in_webhook: true,
      record_call: true,
    });
    expect(upd.status).toBe(200);
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345678', status: 'completed', duration: 30 });
    await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: assistantId, variables: { name: 'Ada' } });
    await clock.advance(10 * 60_000);
    await sim.state.settled();

    expect(receiver.bodies).toHaveLength(1);
    const p = receiver.bodies[0]!;
    expect(Object.keys(p).sort()).toEqual(
      ['id', 'customer_phone', 'assistant_phone', 'duration', 'status', 'extracted_variables', 'input_variables', 'transcript', 'recording_url', 'created_at', 'finished_at', 'lead', 'campaign'].sort(),
    );
    expect(p).toMatchObject({ customer_phone: '+4915112345678', duration: 30, status: 'completed', input_variables: { name: 'Ada' } });
    expect(p.lead).toMatchObject({ phone_number: '+4915112345678', variables: { name: 'Ada' }, status: 'created' });
    expect(p.campaign).toMatchObject({ id: campaignId, status: 'draft' });
    expect(typeof p.recording_url).toBe('string');
    expect(p.transcript).toContain('Hi Ada,');

    const call = (await a.get('/api/user/calls')).body.data[0];
    expect(call.id).toBe(p.id);
    expect(call.campaign_name).toBe('Default campaign');
    expect(call.webhook_response).toEqual({ status: 200, body: { received: 1 } });
    const log = (await controls.get('/__sim/webhooks')).body.deliveries;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ callId: p.id, status: 200 });
  });

  it('sends only completed calls with send_webhook_only_on_completed, and no recording without the flag', async () => {
    const { a, clock, sim, controls, assistantId, receiver } = await setup();
    await a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: receiver.url, send_webhook_only_on_completed: true });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345001', status: 'busy' });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345002', status: 'completed', duration: 25 });
    await a.post('/api/user/make_call', { phone_number: '+4915112345001', assistant_id: assistantId });
    await a.post('/api/user/make_call', { phone_number: '+4915112345002', assistant_id: assistantId });
    await clock.advance(10 * 60_000);
    await sim.state.settled();
    expect(receiver.bodies.map((b) => b.customer_phone)).toEqual(['+4915112345002']);
    expect('recording_url' in receiver.bodies[0]!).toBe(false);
    expect(receiver.bodies[0]!.lead).toBeNull();
  });

  it('sends nothing once the webhook is disabled, while calls in progress still finish', async () => {
    const { a, clock, sim, controls, assistantId, receiver } = await setup();
    await a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: receiver.url });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345003', status: 'completed', duration: 60 });
    await a.post('/api/user/make_call', { phone_number: '+4915112345003', assistant_id: assistantId });
    await clock.advance(20_000);
    const off = await a.post('/api/user/assistants/disable-webhook', { assistant_id: assistantId });
    expect(off.body).toEqual({ message: 'Webhook disabled successfully', data: [] });
    await clock.advance(10 * 60_000);
    await sim.state.settled();
    expect(receiver.bodies).toHaveLength(0);
    expect((await a.get('/api/user/calls')).body.data[0].status).toBe('completed');
    const rec = (await a.get('/api/user/assistants/get')).body.data.find((x: { id: number }) => x.id === assistantId);
    expect(rec).toMatchObject({ is_webhook_active: false, webhook_url: null });
  });

  it('honours is_webhook_active false set through update', async () => {
    const { a, clock, sim, controls, assistantId, receiver } = await setup();
    await a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: receiver.url });
    await a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: false });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345004', status: 'completed', duration: 20 });
    await a.post('/api/user/make_call', { phone_number: '+4915112345004', assistant_id: assistantId });
    await clock.advance(10 * 60_000);
    await sim.state.settled();
    expect(receiver.bodies).toHaveLength(0);
    expect(sim.state.webhookDeliveries).toHaveLength(0);
  });
});

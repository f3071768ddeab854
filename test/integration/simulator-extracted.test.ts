// `POST /__sim/extracted` (docs/simulator.md): what the assistant extracts from every
// connected call to one number, in the webhook's extracted_variables and the call list's
// variables, so that tests and the demo can drive rules that read them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { outboundAssistantId, startTestSim } from './simulator-fixture.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function receiver(): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

describe('/__sim/extracted', () => {
  it('puts the variables in the webhook and the call list of connected calls to that number only', async () => {
    const { a, clock, sim, controls } = await startTestSim();
    open.push(sim as RunningSimulator);
    const assistantId = await outboundAssistantId(a);
    const rec = await receiver();
    await a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: rec.url });
    const [HUMAN, MACHINE, BUSY, OTHER] = ['+4915112340001', '+4915112340002', '+4915112340003', '+4915112340004'];
    for (const phone of [HUMAN, MACHINE, BUSY]) expect((await controls.post('/__sim/extracted', { phone_number: phone, variables: { interest: 'yes' } })).status).toBe(200);
    await controls.post('/__sim/outcomes', { phone_number: HUMAN, status: 'completed', answered_by: 'human', duration: 20 });
    await controls.post('/__sim/outcomes', { phone_number: MACHINE, status: 'completed', answered_by: 'machine', duration: 20 });
    await controls.post('/__sim/outcomes', { phone_number: BUSY, status: 'busy' });
    await controls.post('/__sim/outcomes', { phone_number: OTHER, status: 'completed', answered_by: 'human', duration: 20 });
    for (const phone of [HUMAN, MACHINE, BUSY, OTHER]) await a.post('/api/user/make_call', { phone_number: phone, assistant_id: assistantId });
    await clock.advance(10 * 60_000);
    await sim.state.settled();

    const hooks = new Map(rec.bodies.map((b) => [b.customer_phone as string, b.extracted_variables]));
    expect(hooks.get(HUMAN)).toEqual({ interest: 'yes' });
    expect(hooks.get(MACHINE)).toEqual({ interest: 'yes' });
    expect(hooks.get(BUSY) ?? {}).toEqual({});
    expect(hooks.get(OTHER)).not.toHaveProperty('interest');
    const listed = new Map(((await a.get('/api/user/calls')).body.data as { client_phone_number: string; variables: unknown }[]).map((c) => [c.client_phone_number, c.variables]));
    expect(listed.get(HUMAN)).toEqual({ interest: 'yes' });
  });

  it('with count, only the next count connected calls to the number extract the variables', async () => {
    const { a, clock, sim, controls } = await startTestSim();
    open.push(sim as RunningSimulator);
    const assistantId = await outboundAssistantId(a);
    const PHONE = '+4915112340001';
    await controls.post('/__sim/outcomes', { phone_number: PHONE, status: 'busy', count: 1 });
    await controls.post('/__sim/outcomes', { phone_number: PHONE, status: 'completed', answered_by: 'human', duration: 20 });
    expect((await controls.post('/__sim/extracted', { phone_number: PHONE, variables: { callback_at: 'in 5 minutes' }, count: 1 })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      await a.post('/api/user/make_call', { phone_number: PHONE, assistant_id: assistantId });
      await clock.advance(10 * 60_000);
    }
    // The busy call did not connect and does not count; the first connected one takes it; the next has none.
    const calls = [...sim.state.calls.values()].sort((x, y) => x.id - y.id);
    expect(calls.map((c) => c.variables.callback_at ?? null)).toEqual([null, 'in 5 minutes', null]);
    expect(sim.state.extractedByNumber.size).toBe(0);
    expect((await controls.post('/__sim/extracted', { phone_number: PHONE, variables: { a: 1 }, count: 0 })).status).toBe(400);
  });

  it('refuses a body without an E.164 number or a variables mapping, and {} removes the setting', async () => {
    const { sim, controls } = await startTestSim();
    open.push(sim as RunningSimulator);
    expect((await controls.post('/__sim/extracted', { phone_number: '0151', variables: {} })).status).toBe(400);
    expect((await controls.post('/__sim/extracted', { phone_number: '+4915112340001', variables: ['x'] })).status).toBe(400);
    expect((await controls.post('/__sim/extracted', { phone_number: '+4915112340001', variables: { a: 1 } })).status).toBe(200);
    expect((await controls.post('/__sim/extracted', { phone_number: '+4915112340001', variables: {} })).status).toBe(200);
    expect(sim.state.extractedByNumber.size).toBe(0);
  });
});

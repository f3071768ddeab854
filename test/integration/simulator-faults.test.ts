import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { outboundAssistantId, startTestSim } from './simulator-fixture.js';

const open: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setup(opts: Parameters<typeof startTestSim>[0] = {}) {
  const t = await startTestSim(opts);
  open.push(t.sim);
  return { ...t, assistantId: await outboundAssistantId(t.a) };
}

describe('fault injection', () => {
  it('drop_after_create: the call exists but the client sees a broken connection', async () => {
    const { a, controls, sim, assistantId } = await setup();
    const set = await controls.post('/__sim/faults', { path: '/api/user/make_call', drop_after_create: 1 });
    expect(set.status).toBe(200);
    await expect(a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: assistantId })).rejects.toThrow();
    expect(sim.state.calls.size).toBe(1);
    const calls = (await controls.get('/__sim/calls')).body.calls;
    expect(calls[0]).toMatchObject({ client_phone_number: '+4915112345678', user_index: 0, status: 'initiated' });
    // Reads are not affected by a make_call-scoped fault, and reset ends it.
    expect((await a.get('/api/user/calls')).body.total).toBe(1);
    await controls.post('/__sim/reset-faults');
    expect((await a.post('/api/user/make_call', { phone_number: '+4915112345679', assistant_id: assistantId })).status).toBe(200);
  });

  it('drop_after_create: a call whose answer was lost still rings, talks and ends, for every token', async () => {
    const { a, b, controls, clock, sim } = await setup({ outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 }, callDurationSeconds: { min: 4, max: 8 } });
    await controls.post('/__sim/faults', { path: '/api/user/make_call', drop_after_create: 1 });
    await expect(a.post('/api/user/make_call', { phone_number: '+4915112345680', assistant_id: await outboundAssistantId(a) })).rejects.toThrow();
    await expect(b.post('/api/user/make_call', { phone_number: '+4915112345681', assistant_id: await outboundAssistantId(b) })).rejects.toThrow();
    expect(sim.state.calls.size).toBe(2);
    // Dial 1 s + ring at most 8 s + talk at most 8 s.
    await clock.advance(17_000);
    const calls = (await controls.get('/__sim/calls')).body.calls as { user_index: number; timeline: { status: string }[]; finished_at_ms: number | null }[];
    expect(calls.map((c) => [c.user_index, c.timeline.map((t) => t.status)])).toEqual([
      [0, ['initiated', 'ringing', 'in-progress', expect.stringMatching(/^(completed|ended_by_customer|ended_by_assistant)$/)]],
      [1, ['initiated', 'ringing', 'in-progress', expect.stringMatching(/^(completed|ended_by_customer|ended_by_assistant)$/)]],
    ]);
    expect(calls.every((c) => c.finished_at_ms !== null)).toBe(true);
  });

  it('a rejected make_call (bad number) is not dropped: nothing was created', async () => {
    const { a, controls, sim, assistantId } = await setup();
    await controls.post('/__sim/faults', { path: '/api/user/make_call', drop_after_create: 1 });
    const res = await a.post('/api/user/make_call', { phone_number: '0151 123', assistant_id: assistantId });
    expect(res.status).toBe(400);
    expect(typeof res.body.message).toBe('string');
    expect(sim.state.calls.size).toBe(0);
  });

  it('answers 429 with retry_after and Retry-After, and 5xx, for the shares given', async () => {
    const { a, controls } = await setup();
    await controls.post('/__sim/faults', { path: '/api/user/calls', rate_limited: 1, retry_after: 7 });
    const limited = await a.get('/api/user/calls');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.body).toEqual({ error: 'Rate limit exceeded', message: 'Too many requests. Please try again later.', retry_after: 7 });
    expect((await a.get('/api/user/campaigns')).status).toBe(200);

    await controls.post('/__sim/reset-faults');
    await controls.post('/__sim/faults', { server_error: 1, server_status: 503 });
    const down = await a.get('/api/user/campaigns');
    expect(down.status).toBe(503);
    const create = await a.post('/api/user/assistant', { assistant_name: 'x' });
    expect(create).toMatchObject({ status: 503, body: { message: 'Assistant creation failed' } });
    expect((await controls.get('/__sim/faults')).body.rules).toHaveLength(1);
  });

  it('draws partial shares reproducibly from the seed', async () => {
    async function pattern(): Promise<number[]> {
      const { a, controls } = await setup({ seed: 99 });
      await controls.post('/__sim/faults', { server_error: 0.5 });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await a.get('/api/user/campaigns')).status);
      return out;
    }
    const first = await pattern();
    expect(await pattern()).toEqual(first);
    expect(first).toContain(500);
    expect(first).toContain(200);
  });

  it('adds latency on the network clock and refuses bad fault bodies', async () => {
    const { a, controls } = await setup();
    await controls.post('/__sim/faults', { latency_ms: 150 });
    const t0 = performance.now();
    expect((await a.get('/api/user/campaigns')).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    const bad = await controls.post('/__sim/faults', { server_error: 2 });
    expect(bad.status).toBe(400);
  });

  it('refuses make_call with 422 Insufficient balance when asked to', async () => {
    const { a, controls, sim, assistantId } = await setup();
    await controls.post('/__sim/faults', { insufficient_balance: 1 });
    const res = await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: assistantId });
    expect(res).toMatchObject({ status: 422, body: { message: 'Insufficient balance' } });
    expect(sim.state.calls.size).toBe(0);
  });
});

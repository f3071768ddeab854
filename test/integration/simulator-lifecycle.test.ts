import { afterEach, describe, expect, it } from 'vitest';
import { FINAL_CALL_STATUSES } from '../../src/service/schema/constants.js';
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

const numbers = Array.from({ length: 30 }, (_, i) => `+4915112345${String(i).padStart(3, '0')}`);

describe('call lifecycle on a manual clock', () => {
  it('moves a call initiated → ringing → in-progress → final, in clock time', async () => {
    const { a, clock, sim, assistantId, controls } = await setup();
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345678', status: 'ended_by_customer', duration: 42 });
    const start = clock.now();
    const res = await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: assistantId });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Call initiated successfully', data: {} });

    let list = await a.get('/api/user/calls');
    expect(list.body.data[0].status).toBe('initiated');
    expect(list.body.data[0].created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(list.body.data[0].created_at).toBe(new Date(start).toISOString().slice(0, 19).replace('T', ' '));

    await clock.advance(1000);
    list = await a.get('/api/user/calls');
    expect(list.body.data[0].status).toBe('ringing');

    await clock.advance(10 * 60_000);
    list = await a.get('/api/user/calls');
    const call = list.body.data[0];
    expect(call.status).toBe('ended_by_customer');
    expect(call.duration).toBe(42);
    expect(call.answered_by).toBe('human');
    expect(call.transcript.length).toBeGreaterThan(0);

    const [simCall] = [...sim.state.calls.values()];
    const statuses = simCall!.timeline.map((t) => t.status);
    expect(statuses).toEqual(['initiated', 'ringing', 'in-progress', 'ended_by_customer']);
    const times = simCall!.timeline.map((t) => t.at);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(times[3]! - times[2]!).toBe(42_000);
  });

  it('ends calls that never connect from ringing, with duration 0', async () => {
    const { a, clock, controls, assistantId } = await setup();
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345001', status: 'busy' });
    await a.post('/api/user/make_call', { phone_number: '+4915112345001', assistant_id: assistantId });
    await clock.advance(5 * 60_000);
    const timeline = (await controls.get('/__sim/calls')).body.calls[0].timeline.map((t: { status: string }) => t.status);
    expect(timeline).toEqual(['initiated', 'ringing', 'busy']);
    const call = (await a.get('/api/user/calls')).body.data[0];
    expect(call).toMatchObject({ status: 'busy', duration: 0, answered_by: null });
  });

  it('every drawn call reaches a final status within max_duration plus ringing', async () => {
    const { a, clock, assistantId } = await setup({ callDurationSeconds: { min: 20, max: 60 } });
    for (const n of numbers) await a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId });
    await clock.advance(2 * 60_000);
    const list = await a.get('/api/user/calls?per_page=100');
    expect(list.body.total).toBe(numbers.length);
    for (const c of list.body.data) expect(FINAL_CALL_STATUSES).toContain(c.status);
  });

  it('fixed outcomes with count apply to that many calls, then the draw resumes; in-progress hangs', async () => {
    const { a, clock, controls, sim, assistantId } = await setup({ outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 } });
    const n = '+4915112345002';
    await controls.post('/__sim/outcomes', { phone_number: n, status: 'no-answer', count: 1 });
    await a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId });
    await a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId });
    await controls.post('/__sim/outcomes', { phone_number: '+4915112345003', status: 'in-progress' });
    await a.post('/api/user/make_call', { phone_number: '+4915112345003', assistant_id: assistantId });
    await clock.advance(60 * 60_000);
    const calls = [...sim.state.calls.values()];
    expect(calls.map((c) => c.status)).toEqual(['no-answer', expect.stringMatching(/^(completed|ended_by_customer|ended_by_assistant)$/), 'in-progress']);
    const bad = await controls.post('/__sim/outcomes', { phone_number: n, status: 'ringing' });
    expect(bad.status).toBe(400);
  });

  it('cancels the moves of live calls when it closes', async () => {
    const { a, clock, sim, assistantId } = await setup();
    await a.post('/api/user/make_call', { phone_number: '+4915112345005', assistant_id: assistantId });
    expect(clock.pending()).toBeGreaterThan(0);
    await sim.close();
    expect(clock.pending()).toBe(0);
    await clock.advance(60 * 60_000);
    expect([...sim.state.calls.values()][0]!.status).toBe('initiated');
  });

  it('answers make_call with call_id and status when asked to', async () => {
    const { a, assistantId } = await setup({ callIdInResponse: true });
    const res = await a.post('/api/user/make_call', { phone_number: '+4915112345004', assistant_id: assistantId });
    expect(res.body).toMatchObject({ message: 'Call initiated successfully', status: 'initiated' });
    expect(typeof res.body.call_id).toBe('number');
    const list = await a.get('/api/user/calls');
    expect(list.body.data[0].id).toBe(res.body.call_id);
  });
});

describe('seeded reproducibility', () => {
  async function outcomesFor(seed: number, order: string[]): Promise<Record<string, string>> {
    const { a, clock, sim, assistantId } = await setup({ seed });
    // Send concurrently: the outcome of a number must not depend on arrival order.
    await Promise.all(order.map((n) => a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId })));
    await clock.advance(60 * 60_000);
    const out: Record<string, string> = {};
    for (const c of sim.state.calls.values()) out[c.client_phone_number] = `${c.status}/${c.answered_by}/${c.duration}`;
    return out;
  }

  it('gives the same outcomes for the same seed whatever the order, and different ones for another seed', async () => {
    const first = await outcomesFor(11, numbers);
    const second = await outcomesFor(11, [...numbers].reverse());
    const other = await outcomesFor(12, numbers);
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
    const statuses = new Set(Object.values(first).map((s) => s.split('/')[0]));
    expect(statuses.size).toBeGreaterThan(2);
  });

  it('honours configured shares', async () => {
    const { a, clock, sim, assistantId } = await setup({ outcomes: { human: 0, voicemail: 0, busy: 1, 'no-answer': 0, failed: 0 } });
    for (const n of numbers.slice(0, 10)) await a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId });
    await clock.advance(60 * 60_000);
    expect(new Set([...sim.state.calls.values()].map((c) => c.status))).toEqual(new Set(['busy']));
  });
});

describe('the call list (GET /api/user/calls)', () => {
  it('is newest first across pages, the user’s own calls only, filtered by status, number, assistant and day', async () => {
    const { a, b, clock, controls, assistantId } = await setup();
    const otherAssistant = await outboundAssistantId(b);
    for (const [i, n] of numbers.slice(0, 5).entries()) {
      await controls.post('/__sim/outcomes', i === 1 ? { phone_number: n, status: 'busy' } : { phone_number: n, status: 'ended_by_customer', duration: 30 });
    }
    for (const n of numbers.slice(0, 5)) await a.post('/api/user/make_call', { phone_number: n, assistant_id: assistantId });
    await b.post('/api/user/make_call', { phone_number: numbers[6], assistant_id: otherAssistant });
    await clock.advance(24 * 3_600_000);
    // A day later: one more call, still in progress.
    await a.post('/api/user/make_call', { phone_number: numbers[5], assistant_id: assistantId });

    const page1 = await a.get('/api/user/calls?per_page=4');
    const page2 = await a.get('/api/user/calls?per_page=4&page=2');
    expect(page1.body.total).toBe(6);
    const ids = [...page1.body.data, ...page2.body.data].map((c: { id: number }) => c.id);
    expect(ids).toHaveLength(6);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);
    expect([...page1.body.data, ...page2.body.data].map((c: { client_phone_number: string }) => c.client_phone_number)).toEqual([...numbers.slice(0, 6)].reverse());

    const busy = await a.get('/api/user/calls?status=busy');
    expect(busy.body.data.map((c: { client_phone_number: string }) => c.client_phone_number)).toEqual([numbers[1]]);
    // An unencoded `+` arrives as a space: the number still matches by its digits.
    const byNumber = await a.get(`/api/user/calls?phone_number=${numbers[3]!}`);
    expect(byNumber.body.data.map((c: { client_phone_number: string }) => c.client_phone_number)).toEqual([numbers[3]]);
    expect((await a.get(`/api/user/calls?assistant_id=${String(otherAssistant)}`)).body.total).toBe(0);
    expect((await b.get(`/api/user/calls?assistant_id=${String(otherAssistant)}`)).body.total).toBe(1);
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const fromToday = await a.get(`/api/user/calls?date_from=${today}`);
    expect(fromToday.body.data.map((c: { client_phone_number: string }) => c.client_phone_number)).toEqual([numbers[5]]);
    const untilYesterday = await a.get(`/api/user/calls?date_to=${new Date(clock.now() - 24 * 3_600_000).toISOString().slice(0, 10)}`);
    expect(untilYesterday.body.total).toBe(5);
  });
});

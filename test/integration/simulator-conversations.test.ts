// The simulator's conversations (src/simulator/conversations.ts): per number or for every
// number, what the person says and the assistant extracts (a callback phrase in English or
// German, an interest, a wrong number), in the webhook's extracted_variables and the call
// list's variables exactly as the service reports them, the cost in total_cost, all from the seed.
import { afterEach, describe, expect, it } from 'vitest';
import { CALLBACK_PHRASES, SCENARIO_NAMES } from '../../src/simulator/conversations.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import type { SimulatorOptions } from '../../src/simulator/types.js';
import { outboundAssistantId, startTestSim } from './simulator-fixture.js';

const open: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

interface ConversationRow {
  call_id: number;
  phone_number: string;
  placed_at_ms: number;
  ended_at_ms: number | null;
  input_variables: Record<string, unknown>;
  extracted_variables: Record<string, unknown>;
  total_cost: number;
  scenario: string | null;
}

/** Calls each number once (or `times`) with {name}, lets every call end, and returns the simulator's per-call record. */
async function callAll(opts: Partial<SimulatorOptions>, numbers: string[], setup?: (controls: Awaited<ReturnType<typeof startTestSim>>['controls']) => Promise<void>, times = 1) {
  const t = await startTestSim(opts);
  open.push(t.sim);
  const assistantId = await outboundAssistantId(t.a);
  // The payload is kept on the simulator's side whatever the receiver answers.
  await t.a.put(`/api/user/assistant/${assistantId}`, { is_webhook_active: true, webhook_url: `${t.sim.url}/nowhere` });
  await setup?.(t.controls);
  for (let i = 0; i < times; i++) {
    for (const phone of numbers) expect((await t.a.post('/api/user/make_call', { phone_number: phone, assistant_id: assistantId, variables: { name: `n${phone.slice(-3)}` } })).status).toBe(200);
    await t.clock.advance(30 * 60_000);
  }
  await t.sim.state.settled();
  const rows = (await t.controls.get('/__sim/conversations')).body.calls as ConversationRow[];
  const listed = (await t.a.get('/api/user/calls?per_page=100')).body.data as { client_phone_number: string; variables: unknown; total_cost: number; transcript: string }[];
  return { ...t, rows, listed };
}

const numbers = (n: number, base = 4915112340000) => Array.from({ length: n }, (_, i) => `+${base + i}`);

describe('simulator conversations', () => {
  it('plays the scenario set per number: the webhook, the call list and /__sim/conversations report what was extracted and what it cost', async () => {
    const phones = numbers(SCENARIO_NAMES.length);
    const { rows, listed, sim } = await callAll({ outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 } }, phones, async (controls) => {
      for (const [i, scenario] of SCENARIO_NAMES.entries()) expect((await controls.post('/__sim/conversations', { phone_number: phones[i], scenario })).status).toBe(200);
    });
    const byScenario = new Map(rows.map((r) => [r.scenario, r]));
    expect([...byScenario.keys()].sort()).toEqual([...SCENARIO_NAMES].sort());
    expect(byScenario.get('interested')!.extracted_variables).toEqual({ interest: 'yes' });
    expect(byScenario.get('not-interested')!.extracted_variables).toEqual({ interest: 'no' });
    expect(byScenario.get('wrong-number')!.extracted_variables).toEqual({ outcome: 'wrong number' });
    expect(CALLBACK_PHRASES.en.map((p) => p.slice(0, 5))).toContain(String(byScenario.get('callback-en')!.extracted_variables.callback_at).slice(0, 5));
    expect(byScenario.get('callback-de')!.extracted_variables).toMatchObject({ interest: 'callback' });
    for (const r of rows) {
      expect(r.input_variables).toEqual({ name: `n${r.phone_number.slice(-3)}` });
      expect(r.ended_at_ms).toBeGreaterThan(r.placed_at_ms);
      expect(r.total_cost).toBeGreaterThan(0);
      // Exactly as the service reports them: the webhook's extracted_variables and the call list's variables.
      const hook = sim.state.webhookDeliveries.find((d) => d.callId === r.call_id)!;
      expect(hook.payload.extracted_variables).toEqual(r.extracted_variables);
      const inList = listed.find((c) => c.client_phone_number === r.phone_number)!;
      expect(inList.variables).toEqual(r.extracted_variables);
      expect(inList.total_cost).toBe(r.total_cost);
    }
    const deTranscript = listed.find((c) => c.client_phone_number === byScenario.get('callback-de')!.phone_number)!.transcript;
    expect(deTranscript).toMatch(/^AI: Hi n\d{3}, .*\nuser: Ich kann gerade nicht\. Rufen Sie mich .+ zurück\./);
    // A wrong number is over quickly; an interested person talks for minutes and costs more.
    expect(byScenario.get('wrong-number')!.total_cost).toBeLessThan(byScenario.get('interested')!.total_cost);
  });

  it('mix draws a scenario per call from the seed: the same seed plays the same conversations, another seed others', async () => {
    const phones = numbers(60);
    const opts: Partial<SimulatorOptions> = { conversations: 'mix', seed: 21 };
    const play = async (o: Partial<SimulatorOptions>) => (await callAll(o, phones, undefined, 2)).rows.map((r) => [r.phone_number, r.scenario, r.extracted_variables, r.total_cost]);
    const first = await play(opts);
    const again = await play(opts);
    const other = await play({ ...opts, seed: 22 });
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    // Variety: every scenario, several callback phrases in both languages, unreadable ones among them.
    const scenarios = new Set(first.map((r) => r[1]));
    for (const s of SCENARIO_NAMES) expect(scenarios).toContain(s);
    const phrases = new Set(first.flatMap((r) => ((r[2] as Record<string, unknown>).callback_at === undefined ? [] : [String((r[2] as Record<string, unknown>).callback_at)])));
    expect(phrases.size).toBeGreaterThanOrEqual(6);
    // Unanswered calls have no conversation.
    expect(first.some((r) => r[1] === null)).toBe(true);
  });

  it('conversationMix sets the shares; a fixed outcome keeps its duration; the control refuses bad bodies, null and reset remove the setting', async () => {
    const phones = numbers(20);
    const { rows } = await callAll({ conversations: 'mix', conversationMix: { 'callback-en': 0, 'callback-de': 1, interested: 0, 'not-interested': 0, 'wrong-number': 0 }, outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 } }, phones);
    expect(new Set(rows.map((r) => r.scenario))).toEqual(new Set(['callback-de']));

    const PHONE = '+4915112349999';
    const fixed = await callAll({}, [PHONE], async (controls) => {
      await controls.post('/__sim/outcomes', { phone_number: PHONE, status: 'completed', answered_by: 'human', duration: 200 });
      await controls.post('/__sim/conversations', { phone_number: PHONE, scenario: 'wrong-number' });
    });
    expect(fixed.rows[0]).toMatchObject({ scenario: 'wrong-number', extracted_variables: { outcome: 'wrong number' } });
    expect(fixed.listed[0]!.total_cost).toBeCloseTo(4 * 0.094, 4); // 200 s: four started minutes

    const c = fixed.controls;
    expect((await c.post('/__sim/conversations', { phone_number: '0151', scenario: 'mix' })).status).toBe(400);
    expect((await c.post('/__sim/conversations', { phone_number: PHONE, scenario: 'chatty' })).status).toBe(400);
    expect(fixed.sim.state.conversationByNumber.get(PHONE)).toBe('wrong-number');
    expect((await c.post('/__sim/conversations', { phone_number: PHONE, scenario: null })).status).toBe(200);
    expect(fixed.sim.state.conversationByNumber.size).toBe(0);
    await c.post('/__sim/conversations', { phone_number: PHONE, scenario: 'interested' });
    await c.post('/__sim/reset-outcomes');
    expect(fixed.sim.state.conversationByNumber.size).toBe(0);
  });
});

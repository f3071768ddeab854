import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/service/client.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { api, clientFor, failure, startTestSim, type Api } from './simulator-fixture.js';

// Spec sections 2.4, 2.5, 2.7, 2.8, 3 (webhook moves), 4.9–4.18 and the assistant rows
// of spec sections 7 and 8, with the client against the simulator over real HTTP.

let sim: RunningSimulator;
let client: ServiceClient;
let raw: Api;
let outboundId: number;

beforeAll(async () => {
  const t = await startTestSim({ tokens: ['conf-asst', 'conf-other'] });
  sim = t.sim;
  raw = api(sim.url, 'conf-asst');
  client = clientFor(sim.url, 'conf-asst');
  outboundId = (await client.listOutboundAssistants())[0]!.id;
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

async function record(id: number): Promise<Record<string, any>> {
  const page = await raw.get('/api/user/assistants/get?per_page=100');
  return page.body.data.find((a: { id: number }) => a.id === id);
}

describe('4.9 create assistant', () => {
  it('maps calls_direction and engine_type, answers {id, name, status, type, mode}', async () => {
    const res = await raw.post('/api/user/assistant', { assistant_name: 'Front desk', calls_direction: 'receive', engine_type: 'multimodal' });
    expect(res.status).toBeGreaterThanOrEqual(200);
    expect(res.status).toBeLessThan(300);
    expect(res.body).toEqual({ message: 'Assistant created successfully', data: { id: expect.any(Number), name: 'Front desk', status: 'active', type: 'inbound', mode: 'multimodal' } });
    const made = await client.createAssistant({ assistant_name: 'Dialer', calls_direction: 'make', engine_type: 'pipeline' } as never);
    expect(made).toMatchObject({ name: 'Dialer', type: 'outbound', mode: 'pipeline' });
  });

  it('requires assistant_name, and webhook_url when is_webhook_active is true', async () => {
    const noName = await raw.post('/api/user/assistant', { calls_direction: 'make' });
    expect(noName.status).toBe(422);
    expect(noName.body).toMatchObject({ message: 'Validation failed', errors: { assistant_name: [expect.any(String)] } });
    const noUrl = await failure(client.createAssistant({ assistant_name: 'x', is_webhook_active: true } as never));
    expect(noUrl.kind).toBe('validation');
    expect(noUrl.fieldErrors?.webhook_url).toBeDefined();
    const badUrl = await raw.post('/api/user/assistant', { assistant_name: 'x', is_webhook_active: true, webhook_url: 'not a url' });
    expect(badUrl.body.errors.webhook_url).toBeDefined();
  });
});

describe('4.10 update assistant: every range of spec section 8', () => {
  const cases: [string, unknown[], unknown[]][] = [
    ['assistant_name', ['x'.repeat(255)], ['x'.repeat(256)]],
    ['language', ['x'.repeat(100)], ['x'.repeat(101)]],
    ['llm_model', ['x'.repeat(100)], ['x'.repeat(101)]],
    ['endpoint_sensitivity', [0, 5, 2.5], [-0.1, 5.1]],
    ['interrupt_sensitivity', [0, 5], [-1, 6]],
    ['ambient_sound_volume', [0, 1], [-0.01, 1.01]],
    ['llm_temperature', [0, 1], [-0.1, 1.1]],
    ['voice_stability', [0, 1], [-0.1, 1.1]],
    ['voice_similarity', [0, 1], [-0.1, 1.1]],
    ['speech_speed', [0.7, 1.2, 1], [0.69, 1.21]],
    ['min_interrupt_words', [0, 10], [-1, 11, 1.5]],
    ['re_engagement_interval', [7, 600], [6, 601]],
    ['max_call_duration', [20, 1200], [19, 1201]],
    ['max_silence_duration', [1, 120], [0, 121]],
    ['calls_direction', ['make'], ['dial']],
    ['engine_type', ['pipeline'], ['hybrid']],
    ['endpoint_type', ['vad', 'ai'], ['other']],
    ['who_speaks_first', ['AI assistant', 'Customer'], ['Nobody']],
    ['timezone', ['Europe/Berlin'], ['Mars/Olympus']],
    ['webhook_url', ['https://example.com/hook'], ['ftp:/nope', 'plain']],
  ];
  it.each(cases)('%s: accepts the bounds, refuses beyond them with 422 errors.<field>', async (field, good, bad) => {
    for (const v of good) {
      const ok = await raw.put(`/api/user/assistant/${outboundId}`, { [field]: v });
      expect(ok.status, `${field}=${String(v).slice(0, 20)}`).toBe(200);
      expect(ok.body.message).toBe('Assistant updated successfully');
    }
    for (const v of bad) {
      const res = await raw.put(`/api/user/assistant/${outboundId}`, { [field]: v });
      expect(res.status, `${field}=${String(v).slice(0, 20)}`).toBe(422);
      expect(res.body.message).toBe('Validation failed');
      expect(res.body.errors[field]).toBeDefined();
    }
  });

  it('end_call_tool.description max 500', async () => {
    expect((await raw.put(`/api/user/assistant/${outboundId}`, { end_call_tool: { description: 'x'.repeat(500) } })).status).toBe(200);
    const bad = await raw.put(`/api/user/assistant/${outboundId}`, { end_call_tool: { description: 'x'.repeat(501) } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors['end_call_tool.description']).toBeDefined();
  });

  it('post_call_schema items need name (alphanumeric/underscore), type string|number|bool, description', async () => {
    const ok = await raw.put(`/api/user/assistant/${outboundId}`, { post_call_schema: [{ name: 'interested_1', type: 'bool', description: 'Is the customer interested?' }] });
    expect(ok.status).toBe(200);
    const bad = await raw.put(`/api/user/assistant/${outboundId}`, { post_call_schema: [{ name: 'bad-name', type: 'date' }] });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['post_call_schema.0.description', 'post_call_schema.0.name', 'post_call_schema.0.type']);
  });

  it('maps request names onto the record (max_call_duration → max_duration, record_call → record, …)', async () => {
    await client.updateAssistant(outboundId, {
      max_call_duration: 300,
      record_call: false,
      who_speaks_first: 'Customer',
      speech_speed: 0.9,
      noise_cancellation: true,
      filler_audios: true,
      re_engagement_interval: 45,
      end_call_on_voicemail: false,
    } as never);
    const rec = await record(outboundId);
    expect(rec).toMatchObject({
      max_duration: 300,
      record: false,
      wait_for_customer: true,
      speech_speed: '0.9',
      enable_noise_cancellation: true,
      fillers: 1,
      reengagement_interval: 45,
      end_call_on_voicemail: 0,
    });
    expect(rec.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it('tool_ids replace assignments; [] removes all; another user\'s tool is refused', async () => {
    const t1 = await client.createTool({ name: 'tool_one', description: 'one', endpoint: 'https://example.com/1', method: 'GET' } as never);
    const t2 = await client.createTool({ name: 'tool_two', description: 'two', endpoint: 'https://example.com/2', method: 'GET' } as never);
    await client.updateAssistant(outboundId, { tool_ids: [t1.id, t2.id] } as never);
    expect((await record(outboundId)).tools.map((t: { id: number }) => t.id)).toEqual([t1.id, t2.id]);
    await client.updateAssistant(outboundId, { tool_ids: [t2.id] } as never);
    expect((await record(outboundId)).tools.map((t: { id: number }) => t.id)).toEqual([t2.id]);
    await client.updateAssistant(outboundId, { tool_ids: [] } as never);
    expect((await record(outboundId)).tools).toEqual([]);
    const other = clientFor(sim.url, 'conf-other');
    const foreign = await other.createTool({ name: 'their_tool', description: 'theirs', endpoint: 'https://example.com/3', method: 'GET' } as never);
    await other.close();
    const err = await failure(client.updateAssistant(outboundId, { tool_ids: [t1.id, foreign.id] } as never));
    expect(err.kind).toBe('validation');
    expect(err.fieldErrors?.['tool_ids.1']).toBeDefined();
  });

  it('answers a missing or foreign assistant with 404 {message: "Assistant not found"}', async () => {
    const res = await raw.put('/api/user/assistant/999999', { assistant_name: 'x' });
    expect(res).toMatchObject({ status: 404, body: { message: 'Assistant not found' } });
    const foreignId = sim.state.allOf(sim.state.assistants, sim.state.users[1]!.id)[0]!.id;
    expect((await failure(client.updateAssistant(foreignId, { assistant_name: 'x' } as never))).kind).toBe('not-found');
  });
});

describe('spec section 3: webhook configuration moves; 4.13–4.15', () => {
  it('enable through update, disable through webhook_url null, is_webhook_active false, and disable-webhook', async () => {
    await client.updateAssistant(outboundId, { is_webhook_active: true, webhook_url: 'https://example.com/hook' } as never);
    expect(await record(outboundId)).toMatchObject({ is_webhook_active: true, webhook_url: 'https://example.com/hook' });
    await client.updateAssistant(outboundId, { webhook_url: null } as never);
    expect(await record(outboundId)).toMatchObject({ is_webhook_active: false, webhook_url: null });
    await client.updateAssistant(outboundId, { is_webhook_active: true, webhook_url: 'https://example.com/hook2' } as never);
    await client.updateAssistant(outboundId, { is_webhook_active: false } as never);
    expect((await record(outboundId)).is_webhook_active).toBe(false);
    await client.updateAssistant(outboundId, { is_webhook_active: true, webhook_url: 'https://example.com/hook3' } as never);
    const off = await raw.post('/api/user/assistants/disable-webhook', { assistant_id: outboundId });
    expect(off.body).toEqual({ message: 'Webhook disabled successfully', data: [] });
    expect(await record(outboundId)).toMatchObject({ is_webhook_active: false, webhook_url: null });
    // It may be set again later with a new URL.
    await client.updateAssistant(outboundId, { is_webhook_active: true, webhook_url: 'https://example.com/again' } as never);
    expect((await record(outboundId)).webhook_url).toBe('https://example.com/again');
  });

  it('enable/disable inbound webhook: bodies, not found, and The given data was invalid.', async () => {
    const inboundId = (await raw.get('/api/user/assistants/get')).body.data.find((a: { type: string }) => a.type === 'inbound').id;
    const on = await raw.post('/api/user/assistants/enable-inbound-webhook', { assistant_id: inboundId, webhook_url: 'https://example.com/in' });
    expect(on.body).toEqual({ message: 'Webhook enabled successfully', data: [] });
    expect((await record(inboundId)).inbound_webhook_url).toBe('https://example.com/in');
    const offIn = await raw.post('/api/user/assistants/disable-inbound-webhook', { assistant_id: inboundId });
    expect(offIn.body).toEqual({ message: 'Inbound webhook disabled successfully', data: [] });
    expect((await record(inboundId)).inbound_webhook_url).toBeNull();
    for (const path of ['enable-inbound-webhook', 'disable-inbound-webhook', 'disable-webhook']) {
      const missing = await raw.post(`/api/user/assistants/${path}`, { assistant_id: 999999, webhook_url: 'https://example.com/x' });
      expect(missing.body).toEqual({ message: 'Assistant not found' });
      const invalid = await raw.post(`/api/user/assistants/${path}`, {});
      expect(invalid.body.message).toBe('The given data was invalid.');
      expect(invalid.body.errors.assistant_id).toBeDefined();
    }
    const noUrl = await raw.post('/api/user/assistants/enable-inbound-webhook', { assistant_id: inboundId });
    expect(noUrl.body.errors.webhook_url).toBeDefined();
    expect((await failure(client.disableWebhook(999999))).kind).toBe('not-found');
  });
});

describe('4.11 / 4.12 listing assistants', () => {
  it('paginates full records (default 10 per page; per_page 1–100)', async () => {
    for (let i = 0; i < 9; i++) await client.createAssistant({ assistant_name: `Bulk ${i}` } as never);
    const first = await raw.get('/api/user/assistants/get');
    expect(first.body).toMatchObject({ current_page: 1, per_page: 10, from: 1, to: 10 });
    expect(first.body.total).toBeGreaterThan(10);
    expect(first.body.next_page_url).toMatch(/[?&]page=2(&|$)/);
    const rec = first.body.data[0];
    for (const key of ['id', 'user_id', 'phone_number_id', 'voice_id', 'name', 'variables', 'tools', 'is_webhook_active', 'webhook_url', 'type', 'status', 'max_duration', 'record', 'timezone', 'mode', 'uuid', 'filler_config', 'llm_temperature', 'widget_settings', 'deleted_at']) {
      expect(rec, key).toHaveProperty(key);
    }
    expect(rec.filler_config).toEqual({ neutral: expect.any(Array), negative: expect.any(Array), positive: expect.any(Array), question: expect.any(Array) });
    const seen: number[] = [];
    for await (const a of client.iterateAssistants({ per_page: 3 })) seen.push(a.id);
    expect(seen.length).toBe(first.body.total);
    expect(new Set(seen).size).toBe(seen.length);
    for (const per of [0, 101, -1]) expect((await raw.get(`/api/user/assistants/get?per_page=${per}`)).status).toBe(422);
    expect((await raw.get('/api/user/assistants/get?per_page=100')).body.per_page).toBe(100);
  });

  it('lists outbound assistants as a plain array of summaries, type always outbound', async () => {
    const res = await raw.get('/api/user/assistants/outbound');
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.every((a: { type: string }) => a.type === 'outbound')).toBe(true);
    expect(Object.keys(res.body[0]).sort()).toEqual(
      ['id', 'user_id', 'name', 'type', 'mode', 'status', 'voice_id', 'language_id', 'timezone', 'initial_message', 'system_prompt', 'variables', 'webhook_url', 'is_webhook_active', 'created_at', 'updated_at'].sort(),
    );
  });
});

describe('4.16–4.18 lookups', () => {
  it('phone numbers: every type_label; type=inbound hides Caller ID and assigned numbers', async () => {
    const all = await client.listPhoneNumbers();
    expect(new Set(all.map((p) => p.type_label))).toEqual(new Set(['Normal', 'SIP', 'Caller ID']));
    const inbound = await client.listPhoneNumbers({ type: 'inbound' });
    expect(inbound.length).toBeGreaterThan(0);
    expect(inbound.length).toBeLessThan(all.length);
    expect(inbound.every((p) => p.type_label !== 'Caller ID' && p.is_available === true)).toBe(true);
    expect((await raw.get('/api/user/assistants/phone-numbers?type=sideways')).status).toBe(422);
    // Assigning a number through phone_number_id takes it out of type=inbound; null gives it back.
    const free = inbound[0]!.id;
    await client.updateAssistant(outboundId, { phone_number_id: free } as never);
    expect((await client.listPhoneNumbers({ type: 'inbound' })).map((p) => p.id)).not.toContain(free);
    await client.updateAssistant(outboundId, { phone_number_id: null } as never);
    expect((await client.listPhoneNumbers({ type: 'inbound' })).map((p) => p.id)).toContain(free);
  });

  it('voices: both modes, filter by mode, a private voice of the caller; models: {id, name}', async () => {
    const voices = await client.listVoices();
    expect(new Set(voices.map((v) => v.mode))).toEqual(new Set(['pipeline', 'multimodal']));
    const multi = await client.listVoices({ mode: 'multimodal' });
    expect(multi.length).toBeGreaterThan(0);
    expect(multi.every((v) => v.mode === 'multimodal')).toBe(true);
    const models = await raw.get('/api/user/assistants/models');
    expect(models.body.length).toBeGreaterThan(0);
    expect(Object.keys(models.body[0]).sort()).toEqual(['id', 'name']);
    // llm_model takes a model name; voice_id must exist among available voices.
    await client.updateAssistant(outboundId, { llm_model: models.body[1].name, voice_id: multi[0]!.id } as never);
    expect(await record(outboundId)).toMatchObject({ llm_model_id: models.body[1].id, voice_id: multi[0]!.id });
    expect((await failure(client.updateAssistant(outboundId, { voice_id: 999999 } as never))).fieldErrors?.voice_id).toBeDefined();
  });
});

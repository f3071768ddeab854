import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { api, outboundAssistantId, startTestSim } from './simulator-fixture.js';

const open: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setup(opts: Parameters<typeof startTestSim>[0] = {}) {
  const t = await startTestSim(opts);
  open.push(t.sim);
  return t;
}

describe('per-user isolation', () => {
  it('keeps each user\'s records invisible to the other', async () => {
    const { a, b } = await setup();
    const aAssistant = await outboundAssistantId(a);
    const bAssistant = await outboundAssistantId(b);
    expect(aAssistant).not.toBe(bAssistant);

    // B cannot call with, update or configure A's assistant: "not found".
    const call = await b.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: aAssistant });
    expect(call).toMatchObject({ status: 404, body: { message: 'Assistant not found' } });
    const upd = await b.put(`/api/user/assistant/${aAssistant}`, { assistant_name: 'mine now' });
    expect(upd).toMatchObject({ status: 404, body: { message: 'Assistant not found' } });
    const hook = await b.post('/api/user/assistants/disable-webhook', { assistant_id: aAssistant });
    expect(hook).toMatchObject({ status: 404, body: { message: 'Assistant not found' } });

    // A's call, tool, lead and campaign stay A's.
    await a.post('/api/user/make_call', { phone_number: '+4915112345678', assistant_id: aAssistant });
    const tool = await a.post('/api/user/tools', { name: 'lookup', description: 'Look up', endpoint: 'https://example.com/x', method: 'GET' });
    expect(tool.status).toBe(201);
    const bTool = await b.put(`/api/user/tools/${tool.body.data.id}`, { timeout: 5 });
    expect(bTool).toMatchObject({ status: 404, body: { message: 'Tool not found' } });
    const aCampaign = (await a.get('/api/user/campaigns')).body[0].id;
    const bLead = await b.post('/api/user/lead', { phone_number: '+4915112345678', campaign_id: aCampaign });
    expect(bLead.status).toBe(422);
    expect(bLead.body.errors.campaign_id).toBeDefined();
    const bStatus = await b.post('/api/user/campaigns/update-status', { campaign_id: aCampaign, action: 'start' });
    expect(bStatus.status).toBe(404);
    const bAttach = await b.put(`/api/user/assistant/${bAssistant}`, { tool_ids: [tool.body.data.id] });
    expect(bAttach.status).toBe(422);
    expect(bAttach.body.errors['tool_ids.0']).toBeDefined();

    expect((await b.get('/api/user/calls')).body.total).toBe(0);
    expect((await a.get('/api/user/calls')).body.total).toBe(1);
    const bAssistants = (await b.get('/api/user/assistants/get')).body.data.map((x: { user_id: number }) => x.user_id);
    expect(new Set(bAssistants).size).toBe(1);
    expect(bAssistants).not.toContain((await a.get('/api/user/assistants/get')).body.data[0].user_id);
    const aNumbers = (await a.get('/api/user/assistants/phone-numbers')).body.map((p: { id: number }) => p.id);
    const bNumbers = (await b.get('/api/user/assistants/phone-numbers')).body.map((p: { id: number }) => p.id);
    expect(aNumbers.filter((id: number) => bNumbers.includes(id))).toEqual([]);
  });

  it('shows each user the public voices plus only their own private voice', async () => {
    const { a, b } = await setup();
    const aVoices = (await a.get('/api/user/assistants/voices')).body as { id: number; name: string }[];
    const bVoices = (await b.get('/api/user/assistants/voices')).body as { id: number; name: string }[];
    const aOnly = aVoices.filter((v) => !bVoices.some((w) => w.id === v.id));
    expect(aOnly).toHaveLength(1);
    const bad = await b.put(`/api/user/assistant/${await outboundAssistantId(b)}`, { voice_id: aOnly[0]!.id });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.voice_id).toBeDefined();
  });
});

describe('authentication', () => {
  it('answers a missing or unknown token with 401 Invalid API key', async () => {
    const { anon, sim } = await setup();
    const res = await anon.get('/api/user/calls');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('Invalid API key');
    expect(typeof res.body.message).toBe('string');
    const wrong = await api(sim.url, 'nope').get('/api/user/campaigns');
    expect(wrong.status).toBe(401);
  });

  it('can revoke and restore a token through /__sim/auth', async () => {
    const { a, controls } = await setup();
    expect((await a.get('/api/user/campaigns')).status).toBe(200);
    expect((await controls.post('/__sim/auth', { user_index: 0, valid: false })).status).toBe(200);
    expect((await a.get('/api/user/campaigns')).status).toBe(401);
    await controls.post('/__sim/auth', { user_index: 0, valid: true });
    expect((await a.get('/api/user/campaigns')).status).toBe(200);
  });

  it('can answer a bad token with a 302 to a login page', async () => {
    const { anon } = await setup({ badTokenAnswer: 'redirect302' });
    const res = await anon.get('/api/user/calls');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/\/login$/);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('keeps /__sim/ controls out of /api/user and unknown paths 404', async () => {
    const { a, anon } = await setup();
    expect((await anon.get('/__sim/calls')).status).toBe(200);
    expect((await a.get('/api/user/__sim/calls')).status).toBe(404);
    expect((await a.post('/api/user/calls')).status).toBe(405);
  });
});

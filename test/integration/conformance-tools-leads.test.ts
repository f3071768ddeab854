import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/service/client.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { api, clientFor, failure, startTestSim, type Api } from './simulator-fixture.js';

// Spec sections 2.1–2.3, 4.1–4.6, and the tool rows of sections 7 and 8, walked with the
// client against the simulator over real HTTP (raw requests where the exact body matters).

let sim: RunningSimulator;
let client: ServiceClient;
let raw: Api;
let campaignId: number;

beforeAll(async () => {
  const t = await startTestSim({ tokens: ['conf-tools'] });
  sim = t.sim;
  raw = api(sim.url, 'conf-tools');
  client = clientFor(sim.url, 'conf-tools');
  campaignId = (await client.listCampaigns())[0]!.id;
});
afterAll(async () => {
  await client.close();
  await sim.close();
});

const tool = (over: Record<string, unknown> = {}) => ({
  name: 'check_order',
  description: 'Looks up an order when the customer names one',
  endpoint: 'https://example.com/orders',
  method: 'GET',
  ...over,
});

describe('2.1 / 4.1 create mid call tool', () => {
  it('answers 201 with the record, default timeout 10, ISO 8601 timestamps with microseconds', async () => {
    const res = await raw.post('/api/user/tools', tool({ name: 'first_tool' }));
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Tool created successfully');
    expect(res.body.data).toMatchObject({ name: 'first_tool', method: 'GET', timeout: 10, headers: [], schema: [] });
    expect(res.body.data.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(res.body.data.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const viaClient = await client.createTool({
      ...tool({ name: 'second_tool' }),
      method: 'POST',
      timeout: 30,
      headers: [{ name: 'X-Key', value: 'v' }],
      schema: [{ name: 'order_id', type: 'string', description: 'the order id' }],
    } as never);
    expect(viaClient).toMatchObject({ name: 'second_tool', timeout: 30, method: 'POST' });
    expect(typeof viaClient.id).toBe('number');
  });

  it.each([
    ['name with uppercase', { name: 'Check_order' }, 'name'],
    ['name starting with underscore', { name: '_check' }, 'name'],
    ['name with digits', { name: 'check2' }, 'name'],
    ['description over 255', { description: 'x'.repeat(256) }, 'description'],
    ['endpoint not a URL', { endpoint: 'not a url' }, 'endpoint'],
    ['method not allowed', { method: 'HEAD' }, 'method'],
    ['timeout 0', { timeout: 0 }, 'timeout'],
    ['timeout 31', { timeout: 31 }, 'timeout'],
    ['header without value', { headers: [{ name: 'X' }] }, 'headers.0.value'],
    ['schema name of 1 char', { schema: [{ name: 'a', type: 'string', description: 'abc' }] }, 'schema.0.name'],
    ['schema name of 33 chars', { schema: [{ name: 'a'.repeat(33), type: 'string', description: 'abc' }] }, 'schema.0.name'],
    ['schema name starting with a digit', { schema: [{ name: '1ab', type: 'string', description: 'abc' }] }, 'schema.0.name'],
    ['schema type unknown', { schema: [{ name: 'ab', type: 'date', description: 'abc' }] }, 'schema.0.type'],
    ['schema description of 2 chars', { schema: [{ name: 'ab', type: 'string', description: 'ab' }] }, 'schema.0.description'],
    ['schema description over 255', { schema: [{ name: 'ab', type: 'number', description: 'x'.repeat(256) }] }, 'schema.0.description'],
    ['missing name', { name: undefined }, 'name'],
  ])('refuses %s with 422 and errors.%s', async (_label, over, field) => {
    const res = await raw.post('/api/user/tools', tool(over));
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('Validation failed');
    expect(Array.isArray(res.body.errors[field])).toBe(true);
    expect(typeof res.body.errors[field][0]).toBe('string');
    const err = await failure(client.createTool(tool(over) as never));
    expect(err.kind).toBe('validation');
    expect(err.fieldErrors?.[field]).toBeDefined();
  });

  it('accepts the limits themselves (timeout 1 and 30, name 2 and 32, description 3 and 255)', async () => {
    const ok = await client.updateTool((await client.createTool(tool({ name: 'limits_tool' }) as never)).id, {
      timeout: 1,
      description: 'x'.repeat(255),
      schema: [
        { name: 'ab', type: 'boolean', description: 'abc' },
        { name: 'a'.repeat(32), type: 'number', description: 'x'.repeat(255) },
      ],
    } as never);
    expect(ok.timeout).toBe(1);
    expect((await client.updateTool(ok.id, { timeout: 30 } as never)).timeout).toBe(30);
  });

  it('answers the plan limit (5 tools) with 422 and message only', async () => {
    // Earlier tests created 3 tools; two more reach the limit.
    const have = sim.state.allOf(sim.state.tools, sim.state.users[0]!.id).length;
    for (let i = have; i < 5; i++) await client.createTool(tool({ name: `tool_${'abcde'[i]}` }) as never);
    const res = await raw.post('/api/user/tools', tool({ name: 'one_too_many' }));
    expect(res.status).toBe(422);
    expect(typeof res.body.message).toBe('string');
    expect(res.body.errors).toBeUndefined();
    const err = await failure(client.createTool(tool({ name: 'one_too_many' }) as never));
    expect(err.kind).toBe('rejected');
    expect(err.fieldErrors).toBeUndefined();
  });
});

describe('4.2 update mid call tool', () => {
  it('changes only supplied fields and answers the full record', async () => {
    const id = sim.state.allOf(sim.state.tools, sim.state.users[0]!.id)[0]!.id;
    const res = await raw.put(`/api/user/tools/${id}`, { timeout: 20, headers: [{ name: 'A', value: 'b' }] });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Tool updated successfully');
    expect(res.body.data).toMatchObject({ id, name: 'first_tool', timeout: 20, headers: [{ name: 'A', value: 'b' }] });
  });

  it('answers a missing tool with {message: "Tool not found"} and bad input with Validation failed', async () => {
    const missing = await raw.put('/api/user/tools/999999', { timeout: 5 });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Tool not found' });
    expect((await failure(client.updateTool(999999, { timeout: 5 }))).kind).toBe('not-found');
    const id = sim.state.allOf(sim.state.tools, sim.state.users[0]!.id)[0]!.id;
    const bad = await raw.put(`/api/user/tools/${id}`, { timeout: 31 });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ message: 'Validation failed', errors: { timeout: [expect.any(String)] } });
  });
});

describe('2.2 / 4.3 / 4.4 leads', () => {
  it('creates a lead with secondary contacts, each with its own id and status created', async () => {
    const res = await raw.post('/api/user/lead', {
      phone_number: '+4915112340001',
      campaign_id: campaignId,
      variables: { name: 'Ada', email: 'ada@example.com' },
      secondary_contacts: [{ phone_number: '+4915112340002', variables: { name: 'Bob' } }, { phone_number: '+4915112340003', variables: {} }],
    });
    expect([200, 201]).toContain(res.status);
    expect(res.body.message).toBe('Lead created successfully');
    const lead = res.body.data;
    expect(lead).toMatchObject({ campaign_id: campaignId, phone_number: '+4915112340001', status: 'created', variables: { name: 'Ada' } });
    expect(lead.campaign).toEqual({ id: campaignId, name: expect.any(String) });
    expect(lead.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(lead.secondary_contacts).toHaveLength(2);
    const ids = new Set([lead.id, ...lead.secondary_contacts.map((s: { id: number }) => s.id)]);
    expect(ids.size).toBe(3);
    for (const s of lead.secondary_contacts) {
      expect(s.status).toBe('created');
      expect(s.updated_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
  });

  it('refuses a duplicate in the campaign unless allow_dupplicate is true', async () => {
    const body = { phone_number: '+4915112340011', campaign_id: campaignId };
    await client.createLead(body);
    const dup = await failure(client.createLead(body));
    expect(dup.kind).toBe('validation');
    expect(dup.fieldErrors?.phone_number).toBeDefined();
    const allowed = await client.createLead({ ...body, allow_dupplicate: true });
    expect(allowed.phone_number).toBe('+4915112340011');
  });

  it('refuses numbers that are not E.164 and campaigns that do not exist', async () => {
    expect((await failure(client.createLead({ phone_number: '015112345678', campaign_id: campaignId }))).fieldErrors?.phone_number).toBeDefined();
    const sc = await raw.post('/api/user/lead', { phone_number: '+4915112340021', campaign_id: campaignId, secondary_contacts: [{ phone_number: 'x' }] });
    expect(sc.body.errors['secondary_contacts.0.phone_number']).toBeDefined();
    expect((await failure(client.createLead({ phone_number: '+4915112340022', campaign_id: 999999 }))).kind).toBe('validation');
  });

  it('lists leads as a plain array with filters (campaign, status, partial number)', async () => {
    const res = await raw.get('/api/user/leads');
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.length).toBeGreaterThanOrEqual(3);
    const partial = await client.listLeads({ phone_number: '15112340001' });
    expect(partial.items.map((l) => l.phone_number)).toEqual(['+4915112340001']);
    expect((await client.listLeads({ status: 'completed' })).items).toEqual([]);
    expect((await client.listLeads({ campaign_id: 999999 })).items).toEqual([]);
    const all: string[] = [];
    for await (const l of client.iterateLeads()) all.push(l.phone_number);
    expect(all.length).toBe(res.body.length);
  });
});

describe('2.3 / 4.5 / 4.6 campaigns', () => {
  it('lists campaigns as a plain array of records with ISO timestamps and status draft', async () => {
    const res = await raw.get('/api/user/campaigns');
    expect(Array.isArray(res.body)).toBe(true);
    const c = res.body[0];
    expect(c).toMatchObject({ status: 'draft', max_calls_in_parallel: expect.any(Number), mark_complete_when_no_leads: expect.any(Boolean), max_retries: expect.any(Number), retry_interval: expect.any(Number) });
    expect(c.allowed_hours_start_time).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    expect(c.allowed_days.every((d: string) => /^[a-z]+day$/.test(d))).toBe(true);
    expect(c.created_at).toMatch(/\.\d{6}Z$/);
  });

  it('start → in-progress, stop → stopped, with message, success and data', async () => {
    const started = await raw.post('/api/user/campaigns/update-status', { campaign_id: campaignId, action: 'start' });
    expect(started.body).toEqual({ message: 'Campaign started successfully.', success: true, data: { campaign_id: campaignId, status: 'in-progress' } });
    const stopped = await client.updateCampaignStatus({ campaign_id: campaignId, action: 'stop' });
    expect(stopped).toMatchObject({ success: true, campaignId, status: 'stopped' });
    expect((await client.listCampaigns())[0]!.status).toBe('stopped');
    const bad = await raw.post('/api/user/campaigns/update-status', { campaign_id: campaignId, action: 'pause' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.action).toBeDefined();
  });
});

describe('leads answered with the pagination envelope (some deployments)', () => {
  it('pages leads with per_page and page, and the client iterates them all', async () => {
    const t = await startTestSim({ tokens: ['conf-pages'], leadsPaginated: true });
    const c = clientFor(t.sim.url, 'conf-pages');
    try {
      const campaign = (await c.listCampaigns())[0]!.id;
      for (let i = 0; i < 5; i++) await c.createLead({ phone_number: `+491511234050${i}`, campaign_id: campaign });
      const res = await api(t.sim.url, 'conf-pages').get('/api/user/leads?per_page=2');
      expect(res.body).toMatchObject({ current_page: 1, per_page: 2, total: 5, last_page: 3 });
      const seen: string[] = [];
      for await (const l of c.iterateLeads({ per_page: 2 })) seen.push(l.phone_number);
      expect(seen.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `+491511234050${i}`));
    } finally {
      await c.close();
      await t.sim.close();
    }
  });
});

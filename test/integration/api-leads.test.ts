// The API's lead routes through the generated client on a running stack (store, engine,
// simulator), every answer checked against the OpenAPI document the server serves.
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient, fetchOpenApi, rawRequest, ResponseChecker, type ApiClient } from '../helpers/api.js';
import { allSucceed, phoneNumbers, startStack, waitUntil, type Stack, type StackOptions } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function start(opts: Partial<StackOptions> = {}): Promise<{ stack: Stack; checker: ResponseChecker; api: ApiClient }> {
  stack = await startStack({
    campaigns: [{ name: 'spring', leads: [{ phone: '+12025550999' }], settings: { defaultCountry: 'US' } }],
    startEngine: false,
    api: true,
    ...opts,
  });
  const checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
  return { stack, checker, api: apiClient(stack.httpUrl, checker) };
}

const spring = { params: { path: { name: 'spring' } } };

async function leadCount(s: Stack): Promise<number> {
  const row = await s.db.selectFrom('leads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A raw POST of leads (what the generated client will not send), its answer checked all the same. */
function postRaw(checker: ResponseChecker, s: Stack, body: string, headers: Record<string, string> = {}) {
  return rawRequest(checker, s.httpUrl, 'POST', '/api/v1/campaigns/{name}/leads', '/api/v1/campaigns/spring/leads', { body, headers: { 'Content-Type': 'application/json', ...headers } });
}

describe('API: leads', () => {
  it('adds one lead, finds it by id, external_id and number, changes its variables', async () => {
    const { stack, api } = await start();
    const added = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: '(202) 555-0100', external_id: 'crm-4711', variables: { first_name: 'Ada', age: 36, vip: true } } });
    expect(added.response.status).toBe(200);
    const [item] = added.data!.items;
    expect(item).toMatchObject({ external_id: 'crm-4711', outcome: 'accepted', reason: null });
    const id = item!.id!;

    const one = await api.GET('/api/v1/leads/{id}', { params: { path: { id } } });
    expect(one.data).toMatchObject({ id, campaign: 'spring', external_id: 'crm-4711', phone_number: '+12025550100', state: 'pending', variables: { first_name: 'Ada', age: '36', vip: 'true' }, attempts: [], result: null });
    const byExternal = await api.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'spring' }, query: { external_id: 'crm-4711' } } });
    expect(byExternal.data!.leads.map((l) => l.id)).toEqual([id]);
    // The number is read as a lead file reads it (the campaign's default country).
    const byNumber = await api.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'spring' }, query: { phone_number: '202-555-0100' } } });
    expect(byNumber.data!.leads.map((l) => l.id)).toEqual([id]);
    const none = await api.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'spring' }, query: { external_id: 'nobody' } } });
    expect(none.data).toEqual({ leads: [] });

    const patched = await api.PATCH('/api/v1/leads/{id}', { params: { path: { id } }, body: { variables: { age: null, plan: 'gold' } } });
    expect(patched.response.status).toBe(200);
    expect(patched.data!.variables).toEqual({ first_name: 'Ada', vip: 'true', plan: 'gold' });
    // While it is being called: 409, nothing changed.
    await stack.db.updateTable('leads').set({ state: 'calling' }).where('id', '=', id).execute();
    const live = await api.PATCH('/api/v1/leads/{id}', { params: { path: { id } }, body: { variables: { plan: 'none' } } });
    expect(live.response.status).toBe(409);
    expect(live.error).toMatchObject({ status: 409, title: 'Conflict' });
    expect((await api.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data!.variables.plan).toBe('gold');

    expect((await api.GET('/api/v1/leads/{id}', { params: { path: { id: 999_999 } } })).response.status).toBe(404);
    expect((await api.PATCH('/api/v1/leads/{id}', { params: { path: { id: 999_999 } }, body: { variables: {} } })).response.status).toBe(404);
  });

  it('answers per item for an array, with the rules of a lead file', async () => {
    const { api } = await start();
    const [a, b] = phoneNumbers(2, 100);
    const added = await api.POST('/api/v1/campaigns/{name}/leads', {
      ...spring,
      body: [
        { phone_number: a!, external_id: 'x1' },
        { phone_number: 'not a number', external_id: 'x2' },
        { phone_number: a!, external_id: 'x3' },
        { phone_number: '+12025550999' },
        { phone_number: b!, timezone: 'Mars/Olympus' },
      ],
    });
    expect(added.data!.items.map((i) => [i.outcome, i.reason])).toEqual([
      ['accepted', null],
      ['invalid', 'not a phone number'],
      ['duplicate', 'same number as item 0'],
      // The lead from the campaign's file, not called yet, takes the item's data (as a file row imported again would).
      ['updated', null],
      ['invalid', 'unknown timezone "Mars/Olympus"'],
    ]);
    // A posted external_id updates its lead while it is not called.
    const again = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: a!, external_id: 'x1', variables: { note: 'new' } } });
    expect(again.data!.items[0]).toMatchObject({ id: added.data!.items[0]!.id, outcome: 'updated' });
  });

  it('refuses what it should as problem documents, and writes nothing then', async () => {
    const { stack, checker, api } = await start();
    const before = await leadCount(stack);
    const unknown = await postRaw(checker, stack, JSON.stringify([{ phone_number: '+12025550100', nickname: 'Ada' }]));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ pointer: '/0/nickname', message: 'unknown field' }]);
    const wrongType = await postRaw(checker, stack, JSON.stringify({ phone_number: 12025550100 }));
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors[0].pointer).toBe('/phone_number');
    const nested = await postRaw(checker, stack, JSON.stringify({ phone_number: '+12025550100', variables: { a: { b: 1 } } }));
    expect(nested.status).toBe(422);
    // Deeper than any request: refused before the schema walks it, in a leads array too.
    const deep = await postRaw(checker, stack, `[${'['.repeat(40)}${']'.repeat(40)}]`);
    expect(deep.status).toBe(400);
    expect(deep.body.title).toBe('Body too deeply nested');
    expect((await postRaw(checker, stack, `[{"phone_number":"+12025550100","variables":{"a":${'['.repeat(40)}${']'.repeat(40)}}}]`)).body.title).toBe('Body too deeply nested');
    expect((await postRaw(checker, stack, '[]')).status).toBe(422);
    expect((await postRaw(checker, stack, '{"phone_number":')).status).toBe(400);
    const tooMany = await postRaw(checker, stack, JSON.stringify(Array.from({ length: 10_001 }, (_, i) => ({ phone_number: `+1202${String(5000000 + i)}` }))));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toMatch(/at most 10,000 leads per request/);
    const missing = await api.POST('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'winter' } }, body: { phone_number: '+12025550100' } });
    expect(missing.response.status).toBe(404);
    const badKey = await postRaw(checker, stack, JSON.stringify({ phone_number: '+12025550100' }), { 'Idempotency-Key': 'ü' });
    expect(badKey.status).toBe(400);
    expect(await leadCount(stack)).toBe(before);
    const lookupBoth = await api.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'spring' }, query: { external_id: 'a', phone_number: '+12025550100' } } });
    expect(lookupBoth.response.status).toBe(400);
    const unknownPatch = await rawRequest(checker, stack.httpUrl, 'PATCH', '/api/v1/leads/{id}', '/api/v1/leads/1', { body: JSON.stringify({ variables: {}, state: 'completed' }), headers: { 'Content-Type': 'application/json' } });
    expect(unknownPatch.status).toBe(422);
  });

  it('Idempotency-Key: a retry gets the first answer and writes nothing; another body with the key is refused', async () => {
    const { stack, checker } = await start();
    const body = JSON.stringify(phoneNumbers(300, 200).map((phone_number, i) => ({ phone_number, external_id: `r${i}` })));
    const headers = { 'Idempotency-Key': 'order-77' };
    // Two at once, then a late retry: one writes, the others answer with its answer.
    const [first, second] = await Promise.all([postRaw(checker, stack, body, headers), postRaw(checker, stack, body, headers)]);
    const retry = await postRaw(checker, stack, body, headers);
    expect([first.status, second.status, retry.status]).toEqual([200, 200, 200]);
    expect(second.body).toEqual(first.body);
    expect(retry.body).toEqual(first.body);
    expect(first.body.items.every((i: { outcome: string }) => i.outcome === 'accepted')).toBe(true);
    expect([first.headers.get('idempotent-replayed'), second.headers.get('idempotent-replayed')].sort()).toEqual(['true', null].sort());
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await leadCount(stack)).toBe(301);
    const other = await postRaw(checker, stack, JSON.stringify({ phone_number: '+12025550111' }), headers);
    expect(other.status).toBe(422);
    expect(other.body.title).toBe('Idempotency key reused');
    expect(await leadCount(stack)).toBe(301);
  });

  it('a posted lead is called at once by a running campaign with a free slot', async () => {
    // Real time (scale 1): without the wake-up the engine would look again only after its idle sleep (30 s).
    const { stack, api } = await start({ scale: 1, startEngine: true, campaigns: [{ name: 'spring', leads: [], settings: { markCompleteWhenNoLeads: false } }] });
    await waitUntil(() => stack.engine !== null);
    const [phone] = phoneNumbers(1, 500);
    const sent = Date.now();
    const added = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: phone! } });
    expect(added.data!.items[0]!.outcome).toBe('accepted');
    await waitUntil(() => stack.simCalls().some((c) => c.client_phone_number === phone), { timeoutMs: 5000 });
    expect(Date.now() - sent).toBeLessThan(1000);
  });

  it('wakes the engine for leads posted into a running campaign, not into a paused one', async () => {
    // A pass costs the event loop about a millisecond even when it claims nothing: a CRM
    // posting into a paused campaign must not buy one per request.
    let wakes = 0;
    const { api } = await start({ api: { onWake: () => wakes++ } });
    const [first, second] = phoneNumbers(2, 800);
    await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: first! } });
    expect(wakes).toBe(1);
    expect((await api.POST('/api/v1/campaigns/{name}/pause', spring)).response.status).toBe(200);
    const paused = wakes;
    const added = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: second! } });
    expect(added.data!.items[0]!.outcome).toBe('accepted');
    expect(wakes).toBe(paused);
  });

  it('tells how many new leads each POST stored, for the planner statistics; a repeat or a replay stores none', async () => {
    const stored: number[] = [];
    const { api } = await start({ api: { onLeadsStored: (n) => stored.push(n) } });
    const numbers = phoneNumbers(3, 900);
    const body = [{ phone_number: numbers[0]! }, { phone_number: numbers[1]! }, { phone_number: 'not a number' }];
    await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body });
    expect(stored).toEqual([3]); // two accepted, one kept as invalid
    await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: [{ phone_number: numbers[0]! }, { phone_number: numbers[2]! }] });
    expect(stored).toEqual([3, 1]); // a duplicate and a new one
    const keyed = { ...spring, headers: { 'Idempotency-Key': 'planner-1' }, body: { phone_number: phoneNumbers(1, 950)[0]! } };
    await api.POST('/api/v1/campaigns/{name}/leads', keyed);
    const replay = await api.POST('/api/v1/campaigns/{name}/leads', keyed);
    expect(replay.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(stored).toEqual([3, 1, 1]);
  });

  it('shows a called lead with its attempts and its result', async () => {
    const [phone] = phoneNumbers(1, 600);
    const { stack, api } = await start({ startEngine: true, fixedOutcomes: allSucceed([phone!]), campaigns: [{ name: 'spring', leads: [], settings: { markCompleteWhenNoLeads: false } }] });
    const added = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: phone!, external_id: 'called' } });
    const id = added.data!.items[0]!.id!;
    await waitUntil(async () => (await api.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data?.state === 'completed');
    // The webhook's part of the result first, the poll's (answered_by) after it.
    await waitUntil(async () => (await api.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data?.result?.answered_by === 'human');
    const lead = (await api.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data!;
    expect(lead.attempts).toHaveLength(1);
    expect(lead.attempts[0]).toMatchObject({ phone_number: phone, outcome: 'success' });
    expect(lead.result).toMatchObject({ attempt_id: lead.attempts[0]!.id, status: 'completed', answered_by: 'human' });
    // Called: posting its external_id again changes nothing, and says why.
    const late = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: phone!, external_id: 'called', variables: { late: 'yes' } } });
    expect(late.data!.items[0]).toMatchObject({ id, outcome: 'unchanged', reason: 'already called (state completed): left as it is' });
    await stack.stopEngine();
  });

  it('cancels a lead (DELETE): no further attempt; posting it again or cancelling again leaves it so', async () => {
    const { api } = await start();
    const [phone] = phoneNumbers(1, 700);
    const id = (await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: phone!, external_id: 'stop-me' } })).data!.items[0]!.id!;
    const cancelled = await api.DELETE('/api/v1/leads/{id}', { params: { path: { id } } });
    expect(cancelled.data).toEqual({ id, state: 'cancelled', changed: true, live_call: false });
    expect((await api.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data).toMatchObject({ state: 'cancelled', next_due_at: null });
    const again = await api.DELETE('/api/v1/leads/{id}', { params: { path: { id } } });
    expect(again.data).toEqual({ id, state: 'cancelled', changed: false, live_call: false });
    const reposted = await api.POST('/api/v1/campaigns/{name}/leads', { ...spring, body: { phone_number: phone!, external_id: 'stop-me', variables: { x: '1' } } });
    expect(reposted.data!.items[0]).toMatchObject({ id, outcome: 'unchanged', reason: 'the lead is cancelled: left as it is' });
    expect((await api.DELETE('/api/v1/leads/{id}', { params: { path: { id: 999_999 } } })).response.status).toBe(404);
  });
});

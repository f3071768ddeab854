// The suppression list through the API, as `campaignd suppress` manages it: numbers read in
// the campaigns' default_country, bad ones answered per item, waiting leads suppressed at
// once (and never called by the engine), suppression_file entries removed with the note.
import { afterEach, describe, expect, it } from 'vitest';
import { syncSuppressions } from '../../src/store/suppressions.js';
import { apiClient, fetchOpenApi, rawRequest, ResponseChecker } from '../helpers/api.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const NUMBERS = phoneNumbers(4); // +12025551000 … +12025551003

async function start(opts: { startEngine?: boolean; authorize?: NonNullable<Exclude<Parameters<typeof startStack>[0]['api'], boolean>>['authorize'] } = {}) {
  stack = await startStack({
    campaigns: [{ name: 'spring', leads: NUMBERS.map((phone) => ({ phone })), settings: { defaultCountry: 'US' } }],
    startEngine: opts.startEngine ?? false,
    fixedOutcomes: allSucceed(NUMBERS),
    api: opts.authorize ? { authorize: opts.authorize } : true,
  });
  const checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
  return { stack, checker, api: apiClient(stack.httpUrl, checker) };
}

async function leadStates(s: Stack): Promise<Record<string, string>> {
  const rows = await s.db.selectFrom('leads').select(['phone_number', 'state']).execute();
  return Object.fromEntries(rows.map((r) => [r.phone_number, r.state]));
}

describe('API: suppressions', () => {
  it('adds one number or many, read like suppress add, with bad numbers answered per item; waiting leads are never called', async () => {
    const { stack, api } = await start();
    const one = await api.POST('/api/v1/suppressions', { body: { phone_number: NUMBERS[0]! } });
    expect(one.response.status).toBe(200);
    expect(one.data).toEqual({ added: 1, already_listed: 0, invalid: 0, leads_suppressed: 1, items: [{ input: NUMBERS[0], phone_number: NUMBERS[0], outcome: 'added' }] });
    // National numbers in the campaigns' default_country (US); a bad one does not stop the others.
    const many = await api.POST('/api/v1/suppressions', { body: { phone_numbers: ['(202) 555-1001', NUMBERS[0]!, '12', '202-555-1001'] } });
    expect(many.data).toMatchObject({ added: 1, already_listed: 1, invalid: 1, leads_suppressed: 1 });
    expect(many.data!.items.map((i) => [i.outcome, i.phone_number ?? null])).toEqual([
      ['added', NUMBERS[1]],
      ['already_listed', NUMBERS[0]],
      ['invalid', null],
      ['already_listed', NUMBERS[1]],
    ]);
    expect(many.data!.items[2]!.reason).toBeTruthy();
    // Another country when the request says so (a UK number written nationally).
    const uk = await api.POST('/api/v1/suppressions', { body: { phone_number: '020 7946 0018', country: 'GB' } });
    expect(uk.data!.items[0]).toMatchObject({ outcome: 'added', phone_number: '+442079460018' });
    expect(await leadStates(stack)).toEqual({ [NUMBERS[0]!]: 'suppressed', [NUMBERS[1]!]: 'suppressed', [NUMBERS[2]!]: 'pending', [NUMBERS[3]!]: 'pending' });
    // The engine then calls the others only.
    await stack.startEngine();
    await stack.waitForQuiet(60_000);
    expect(stack.simCalls().map((c) => c.client_phone_number).sort()).toEqual([NUMBERS[2], NUMBERS[3]]);
    const sources = await stack.db.selectFrom('suppressions').select(['phone_number', 'source']).orderBy('phone_number').execute();
    expect(sources.every((r) => r.source === 'api')).toBe(true);
  });

  it('refuses a request that lists nothing readable, or is shaped wrong (422 with pointers), never a 500', async () => {
    const { stack, checker, api } = await start();
    const none = await api.POST('/api/v1/suppressions', { body: { phone_numbers: ['12', 'call me'] } });
    expect(none.response.status).toBe(422);
    expect(none.error).toMatchObject({ status: 422, title: 'Invalid phone number' });
    expect(none.error!.errors!.map((e) => e.pointer)).toEqual(['/phone_numbers/0', '/phone_numbers/1']);
    const bodies = [
      { phone_number: NUMBERS[0], phone_numbers: [NUMBERS[1]] },
      {},
      { phone_numbers: [] },
      { phone_number: 12 },
      { phone_number: NUMBERS[0], note: 'x' },
      { phone_number: NUMBERS[0], country: 'USA' },
    ];
    for (const body of bodies) {
      const res = await rawRequest(checker, stack.httpUrl, 'POST', '/api/v1/suppressions', '/api/v1/suppressions', { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.title).toBe('Invalid body');
    }
    expect(await stack.db.selectFrom('suppressions').select('phone_number').execute()).toEqual([]);
  });

  it('lists in pages, gets one number, and removes it; a suppression_file number is removed with the note that the file brings it back', async () => {
    const { stack, checker, api } = await start();
    await api.POST('/api/v1/suppressions', { body: { phone_numbers: [NUMBERS[0]!, NUMBERS[1]!, NUMBERS[2]!] } });
    await syncSuppressions(stack.db, ['+442079460018'], stack.clock.now());
    const pages: string[][] = [];
    for (let after: string | undefined; ; ) {
      const page = await api.GET('/api/v1/suppressions', { params: { query: { limit: 3, ...(after ? { after } : {}) } } });
      pages.push(page.data!.numbers.map((n) => n.phone_number));
      if (page.data!.next_after === null) break;
      after = page.data!.next_after;
    }
    expect(pages).toEqual([[NUMBERS[0], NUMBERS[1], NUMBERS[2]], ['+442079460018']]);

    const got = await api.GET('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: '(202) 555-1001' } } });
    expect(got.data).toMatchObject({ phone_number: NUMBERS[1], source: 'api' });
    const gone = await api.DELETE('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: NUMBERS[1]! } } });
    expect(gone.data).toEqual({ phone_number: NUMBERS[1], source: 'api', from_suppression_file: false, note: null });
    // Leads suppressed stay so (as suppress remove leaves them).
    expect((await leadStates(stack))[NUMBERS[1]!]).toBe('suppressed');
    const again = await api.DELETE('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: NUMBERS[1]! } } });
    expect(again.response.status).toBe(404);
    expect((await api.GET('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: NUMBERS[1]! } } })).response.status).toBe(404);

    const file = await api.DELETE('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: '+442079460018' } } });
    expect(file.data).toMatchObject({ source: 'file', from_suppression_file: true });
    expect(file.data!.note).toMatch(/suppression_file.*next reload/);

    const bad = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/suppressions/{phone_number}', '/api/v1/suppressions/12');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ title: 'Invalid phone number', errors: [{ pointer: '/path/phone_number' }] });
    const badDelete = await rawRequest(checker, stack.httpUrl, 'DELETE', '/api/v1/suppressions/{phone_number}', '/api/v1/suppressions/not-a-number');
    expect(badDelete.status).toBe(400);
    const badLimit = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/suppressions', '/api/v1/suppressions?limit=0');
    expect(badLimit.status).toBe(400);
  });

  it('reads with a read key, writes only with a write key', async () => {
    const { stack, checker } = await start({
      authorize: async (header, scope) => (header === 'Bearer writer' || scope === 'read' ? { ok: true, keyName: header === 'Bearer writer' ? 'crm' : 'reader' } : { ok: false, status: 403, detail: 'a read key cannot write' }),
    });
    const reader = apiClient(stack.httpUrl, checker, 'reader');
    expect((await reader.GET('/api/v1/suppressions')).response.status).toBe(200);
    expect((await reader.POST('/api/v1/suppressions', { body: { phone_number: NUMBERS[0]! } })).response.status).toBe(403);
    expect((await reader.DELETE('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: NUMBERS[0]! } } })).response.status).toBe(403);
    const writer = apiClient(stack.httpUrl, checker, 'writer');
    expect((await writer.POST('/api/v1/suppressions', { body: { phone_number: NUMBERS[0]! } })).data!.added).toBe(1);
    // The key's name says who listed it.
    expect((await reader.GET('/api/v1/suppressions/{phone_number}', { params: { path: { phone_number: NUMBERS[0]! } } })).data!.source).toBe('api:crm');
  });
});

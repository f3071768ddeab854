// GET /api/v1/explain/{phone_number}: `campaignd explain --json` over HTTP, the planner's
// verdict on each lead with the number, through the generated client.
import { afterEach, describe, expect, it } from 'vitest';
import { explainNumber } from '../../src/explain/explain.js';
import { ManualClock } from '../../src/time/clock.js';
import { apiClient, fetchOpenApi, rawRequest, ResponseChecker } from '../helpers/api.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const [SHARED, OTHER] = phoneNumbers(2) as [string, string];

async function start() {
  const clock = new ManualClock();
  stack = await startStack({
    clock,
    campaigns: [
      { name: 'spring', leads: [{ phone: SHARED }, { phone: OTHER }], settings: { defaultCountry: 'US' } },
      { name: 'autumn', leads: [{ phone: SHARED }], settings: { defaultCountry: 'US' } },
    ],
    startEngine: false,
    api: true,
  });
  const checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
  return { stack, checker, api: apiClient(stack.httpUrl, checker) };
}

describe('API: explain', () => {
  it('gives explain’s verdicts for every lead with the number, read in the campaigns’ country, optionally of one campaign', async () => {
    const { stack, api } = await start();
    const expected = JSON.parse(JSON.stringify(await explainNumber(stack.db, SHARED, stack.clock.now(), () => true)));
    expect(expected.leads).toHaveLength(2);
    const all = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: SHARED } } });
    expect(all.response.status).toBe(200);
    expect(all.data).toEqual(expected);
    const national = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: '(202) 555-1000' } } });
    expect(national.data).toEqual(expected);
    const one = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: SHARED }, query: { campaign: 'autumn' } } });
    expect(one.data!.leads.map((l) => l.campaign)).toEqual(['autumn']);
    // A number no lead has: an answer with no leads, as explain prints.
    const nobody = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: '+12025559999' } } });
    expect(nobody.data).toMatchObject({ phone_number: '+12025559999', leads: [] });
  });

  it('says a number added to the suppression list through the API is suppressed', async () => {
    const { api } = await start();
    await api.POST('/api/v1/suppressions', { body: { phone_number: OTHER } });
    const after = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: OTHER } } });
    expect(after.data!.leads).toMatchObject([{ campaign: 'spring', state: 'suppressed', reason: 'suppressed' }]);
  });

  it('refuses a number it cannot read (400) and an unknown campaign (404) as problem documents', async () => {
    const { stack, checker, api } = await start();
    const bad = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/explain/{phone_number}', '/api/v1/explain/12');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect(bad.body).toMatchObject({ title: 'Invalid phone number', errors: [{ pointer: '/path/phone_number' }] });
    const missing = await api.GET('/api/v1/explain/{phone_number}', { params: { path: { phone_number: SHARED }, query: { campaign: 'winter' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.detail).toMatch(/winter/);
    const badCountry = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/explain/{phone_number}', `/api/v1/explain/${encodeURIComponent(SHARED)}?country=USA`);
    expect(badCountry.status).toBe(400);
    expect(badCountry.body.errors[0].pointer).toBe('/query/country');
  });
});

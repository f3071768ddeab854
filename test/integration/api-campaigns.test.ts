// The API's campaign routes and the dispatcher's refusals, through the generated client on a
// running stack (simulator, engine, store), every answer checked against the document.
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient, fetchOpenApi, rawRequest, ResponseChecker } from '../helpers/api.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function start(authorize?: Parameters<typeof startStack>[0]['api']): Promise<{ stack: Stack; checker: ResponseChecker }> {
  stack = await startStack({
    campaigns: [{ name: 'spring', leads: phoneNumbers(3).map((phone) => ({ phone })) }, { name: 'autumn', leads: [] }],
    startEngine: false,
    api: authorize ?? true,
  });
  return { stack, checker: new ResponseChecker(await fetchOpenApi(stack.httpUrl)) };
}

describe('API: campaigns', () => {
  it('lists the campaigns as status shows them, and gets one by name', async () => {
    const { stack, checker } = await start();
    const api = apiClient(stack.httpUrl, checker);
    const list = await api.GET('/api/v1/campaigns');
    expect(list.response.status).toBe(200);
    expect(list.data!.campaigns.map((c) => c.name).sort()).toEqual(['autumn', 'spring']);
    const one = await api.GET('/api/v1/campaigns/{name}', { params: { path: { name: 'spring' } } });
    expect(one.data).toMatchObject({ name: 'spring', state: 'running', leads: { total: 3, pending: 3 } });
    const missing = await api.GET('/api/v1/campaigns/{name}', { params: { path: { name: 'winter' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toBe('application/problem+json');
    expect(missing.error).toMatchObject({ status: 404, title: 'Not found' });
    expect(missing.error!.detail).toMatch(/winter/);
  });

  it('pauses, resumes, stops and starts a campaign, saying when nothing changed', async () => {
    const { stack, checker } = await start();
    const api = apiClient(stack.httpUrl, checker);
    const path = { params: { path: { name: 'spring' } } };
    expect((await api.POST('/api/v1/campaigns/{name}/pause', path)).data).toEqual({ campaign: 'spring', from: 'running', to: 'paused', changed: true });
    expect((await api.POST('/api/v1/campaigns/{name}/pause', path)).data).toEqual({ campaign: 'spring', from: 'paused', to: 'paused', changed: false });
    expect((await api.GET('/api/v1/campaigns/{name}', path)).data!.state).toBe('paused');
    expect((await api.POST('/api/v1/campaigns/{name}/resume', path)).data!.to).toBe('running');
    expect((await api.POST('/api/v1/campaigns/{name}/stop', path)).data!.to).toBe('stopped');
    expect((await api.POST('/api/v1/campaigns/{name}/start', path)).data!.to).toBe('running');
    const missing = await api.POST('/api/v1/campaigns/{name}/start', { params: { path: { name: 'winter' } } });
    expect(missing.response.status).toBe(404);
  });

  it('refuses unknown paths (404) and methods (405 with Allow) as problem documents', async () => {
    const { stack, checker } = await start();
    const notFound = await fetch(`${stack.httpUrl}/api/v1/nothing-here`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-type')).toBe('application/problem+json');
    expect(await notFound.json()).toMatchObject({ status: 404, title: 'Not found' });
    const wrong = await fetch(`${stack.httpUrl}/api/v1/campaigns`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    // The document the test checks against is the one the server serves.
    const doc = await rawRequest(checker, stack.httpUrl, 'GET', '/api/v1/openapi.json', '/api/v1/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
  });

  it('asks the authorizer for the route’s scope: 401 with WWW-Authenticate, 403 for a read key on a write route', async () => {
    const asked: string[] = [];
    const { stack, checker } = await start({
      authorize: async (header, scope) => {
        asked.push(`${header ?? '-'} ${scope}`);
        if (header !== 'Bearer reader') return { ok: false, status: 401, detail: 'send Authorization: Bearer KEY' };
        return scope === 'read' ? { ok: true, keyName: 'reader' } : { ok: false, status: 403, detail: 'a read key cannot write' };
      },
    });
    const anonymous = await apiClient(stack.httpUrl, checker).GET('/api/v1/campaigns');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.response.headers.get('www-authenticate')).toBe('Bearer');
    const reader = apiClient(stack.httpUrl, checker, 'reader');
    expect((await reader.GET('/api/v1/campaigns')).response.status).toBe(200);
    const write = await reader.POST('/api/v1/campaigns/{name}/pause', { params: { path: { name: 'spring' } } });
    expect(write.response.status).toBe(403);
    expect(write.error).toMatchObject({ status: 403, detail: 'a read key cannot write' });
    expect(asked).toEqual(['- read', 'Bearer reader read', 'Bearer reader write']);
    // The document itself needs no key.
    expect((await fetch(`${stack.httpUrl}/api/v1/openapi.json`)).status).toBe(200);
  });
});

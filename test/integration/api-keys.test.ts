// API keys over HTTP: the daemon's authorizer (src/api/auth.ts) on a running stack's API,
// keys made as `campaignd api-key create` makes them, answers checked against the OpenAPI
// document, on SQLite and PostgreSQL. A read key reads and gets 403 on a write route, a
// write key does both, a revoked key gets 401 at the next request, and no answer and no
// log line (at debug level) holds a key.
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthorizer, type Authorize } from '../../src/api/auth.js';
import { createApiKey } from '../../src/api/keys.js';
import { listApiKeys, revokeApiKey } from '../../src/store/api-keys.js';
import { apiClient, fetchOpenApi, ResponseChecker } from '../helpers/api.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { testDialect } from '../helpers/test-store.js';
import { capturingLogger } from './client-fixture.js';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe(`API keys over HTTP (${testDialect})`, () => {
  it('read key reads, write key writes, a revoked key is refused at the next request; no key in any answer or log line', async () => {
    const logs = capturingLogger();
    let authorize: Authorize | undefined;
    stack = await startStack({
      campaigns: [{ name: 'spring', leads: phoneNumbers(2).map((phone) => ({ phone })) }],
      startEngine: false,
      logger: logs.logger,
      api: { authorize: (header, scope) => authorize!(header, scope) },
    });
    // As the daemon on a non-loopback http.listen: a key always needed.
    authorize = createAuthorizer({ db: stack.db, clock: stack.clock, loopback: false });
    const reader = (await createApiKey(stack.db, 'feed', 'read', stack.clock.now()))!.key;
    const writer = (await createApiKey(stack.db, 'crm', 'write', stack.clock.now()))!.key;
    const checker = new ResponseChecker(await fetchOpenApi(stack.httpUrl));
    const bodies: string[] = [];
    /** The answer's status; its body (as the client parsed it) is kept for the final check. */
    const keep = async (r: { response: Response; data?: unknown; error?: unknown }) => {
      bodies.push(JSON.stringify(r.data ?? r.error));
      return r.response.status;
    };
    const spring = { params: { path: { name: 'spring' } } };

    const anonymous = await apiClient(stack.httpUrl, checker).GET('/api/v1/campaigns');
    expect(await keep(anonymous)).toBe(401);
    expect(anonymous.response.headers.get('www-authenticate')).toBe('Bearer');
    expect(anonymous.error!.detail).toMatch(/Authorization: Bearer KEY.*campaignd api-key create/);

    const asReader = apiClient(stack.httpUrl, checker, reader);
    expect(await keep(await asReader.GET('/api/v1/campaigns'))).toBe(200);
    const refused = await asReader.POST('/api/v1/campaigns/{name}/pause', spring);
    expect(await keep(refused)).toBe(403);
    expect(refused.error).toMatchObject({ status: 403, detail: expect.stringContaining('"feed" may only read') });

    const asWriter = apiClient(stack.httpUrl, checker, writer);
    expect(await keep(await asWriter.POST('/api/v1/campaigns/{name}/pause', spring))).toBe(200);
    expect(await keep(await asWriter.GET('/api/v1/campaigns/{name}', spring))).toBe(200);
    // Both uses recorded (the stack's clock runs on, so only that they are).
    expect((await listApiKeys(stack.db)).map((k) => [k.name, typeof k.last_used_at])).toEqual([
      ['feed', 'number'],
      ['crm', 'number'],
    ]);

    expect(await revokeApiKey(stack.db, 'crm', stack.clock.now())).toBe(true);
    const revoked = await asWriter.POST('/api/v1/campaigns/{name}/resume', spring);
    expect(await keep(revoked)).toBe(401);
    expect(revoked.error!.detail).toMatch(/unknown or revoked/);
    expect(await keep(await asReader.GET('/api/v1/campaigns'))).toBe(200);

    const everything = [...bodies, ...logs.lines].join('\n');
    for (const key of [reader, writer]) expect(everything).not.toContain(key.slice(12));
  });
});

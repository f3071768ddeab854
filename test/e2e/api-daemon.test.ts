// The API the way a CRM uses it: the real daemon (bin/campaignd.js run) dialing the
// simulator, keys made with `campaignd api-key create`, and a client generated from the
// OpenAPI document (openapi-typescript + openapi-fetch) whose every answer is checked against
// that document. A posted lead is called, a retried POST writes nothing twice, a cancelled
// lead is not called, a revoked key is refused at once, and no key reaches a log line.
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient, fetchOpenApi, ResponseChecker } from '../helpers/api.js';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { assertNoSecrets, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, type SimProcess, type Workspace } from './daemon-fixture.js';

let ws: Workspace | null = null;
let sim: SimProcess | null = null;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = null;
  sim = null;
});

async function createKey(ws: Workspace, name: string, scope: 'read' | 'write'): Promise<string> {
  const out = await runCampaignd(['api-key', 'create', name, '--scope', scope, '--config', ws.configPath], daemonEnv());
  expect(out.code, out.stderr).toBe(0);
  const key = /cdk_[A-Za-z0-9_-]{20,}/.exec(out.stdout)?.[0];
  expect(key).toBeDefined();
  return key!;
}

describe('the API of a running daemon, through a generated client', () => {
  it('adds leads that get called, replays a retried POST, cancels, and refuses a revoked key at once', async () => {
    sim = await startSimulator({ token: SECRETS.token, callDuration: '1-2' });
    ws = await makeWorkspace({
      simUrl: sim.url,
      campaigns: [
        { name: 'web-form', leads: [], maxParallel: 3, maxRetries: 0, retryInterval: 60 },
        { name: 'later', leads: [], maxParallel: 1, maxRetries: 0, retryInterval: 60, status: 'paused' },
      ],
    });
    const writer = await createKey(ws, 'crm', 'write');
    const reader = await createKey(ws, 'reports', 'read');
    await sim.setWebhook(`${ws.httpUrl}/webhooks/post-call?secret=${SECRETS.webhook}`);
    const daemon = await startDaemon(ws, daemonEnv());
    const checker = new ResponseChecker(await fetchOpenApi(ws.httpUrl));
    const crm = apiClient(ws.httpUrl, checker, writer);
    const reports = apiClient(ws.httpUrl, checker, reader);

    // "This form was filled, call the person now."
    const [formNumber, laterNumber, secondLater] = numbers(3, 400);
    const posted = await crm.POST('/api/v1/campaigns/{name}/leads', {
      params: { path: { name: 'web-form' } },
      body: { phone_number: formNumber!, external_id: 'form-4711', variables: { first_name: 'Ada' } },
    });
    expect(posted.response.status).toBe(200);
    expect(posted.data!.items).toEqual([expect.objectContaining({ external_id: 'form-4711', outcome: 'accepted' })]);
    const id = posted.data!.items[0]!.id!;
    await waitUntil(async () => (await sim!.calls()).some((c) => c.client_phone_number === formNumber), { timeoutMs: 20_000, message: () => 'the posted lead was not called' });
    await waitUntil(async () => (await reports.GET('/api/v1/leads/{id}', { params: { path: { id } } })).data!.attempts.length > 0, { timeoutMs: 20_000, message: () => 'the lead shows no attempt' });
    const byExternalId = await reports.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'web-form' }, query: { external_id: 'form-4711' } } });
    expect(byExternalId.data!.leads.map((l) => l.id)).toEqual([id]);

    // A retry after a lost answer: the same Idempotency-Key gives the first answer and writes nothing twice.
    const once = { params: { path: { name: 'later' } }, body: [{ phone_number: laterNumber! }, { phone_number: secondLater! }], headers: { 'Idempotency-Key': 'batch-2026-11-26-1' } };
    const first = await crm.POST('/api/v1/campaigns/{name}/leads', once);
    const again = await crm.POST('/api/v1/campaigns/{name}/leads', once);
    expect(again.data).toEqual(first.data);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect((await reports.GET('/api/v1/campaigns/{name}', { params: { path: { name: 'later' } } })).data!.leads.total).toBe(2);

    // "Stop calling that lead, they bought": cancelled before its campaign runs, it is never called.
    const cancelId = first.data!.items[0]!.id!;
    const cancelled = await crm.DELETE('/api/v1/leads/{id}', { params: { path: { id: cancelId } } });
    expect(cancelled.response.status).toBe(200);
    expect((await reports.GET('/api/v1/leads/{id}', { params: { path: { id: cancelId } } })).data!.state).toBe('cancelled');
    expect((await crm.POST('/api/v1/campaigns/{name}/resume', { params: { path: { name: 'later' } } })).data!.to).toBe('running');
    await waitUntil(async () => (await sim!.calls()).some((c) => c.client_phone_number === secondLater), { timeoutMs: 20_000, message: () => 'the other lead was not called' });
    expect((await sim.calls()).some((c) => c.client_phone_number === laterNumber)).toBe(false);

    // A read key cannot write; a revoked key is refused on the next request.
    expect((await reports.POST('/api/v1/campaigns/{name}/pause', { params: { path: { name: 'later' } } })).response.status).toBe(403);
    const revoked = await runCampaignd(['api-key', 'revoke', 'reports', '--config', ws.configPath], daemonEnv());
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await reports.GET('/api/v1/campaigns')).response.status).toBe(401);
    expect((await crm.GET('/api/v1/campaigns')).response.status).toBe(200);

    await daemon.stop(10_000);
    assertNoSecrets([daemon.stdout(), daemon.stderr()], 'the daemon log');
    for (const key of [writer, reader]) expect(daemon.stdout() + daemon.stderr()).not.toContain(key);
  }, 120_000);
});

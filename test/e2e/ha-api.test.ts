// The API behind a load balancer (PostgreSQL only): two daemon instances on one database, an
// active one that dials and a standby, both serving /api/v1. A client that retries a POST
// at the other instance after a lost answer gets the first answer and one lead, not two; a
// lead posted to the standby is called by the active instance within a second; a revoked
// key is refused by both on their next request.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLease } from '../../src/store/lease.js';
import { openStore } from '../../src/store/open-store.js';
import { apiClient, fetchOpenApi, ResponseChecker } from '../helpers/api.js';
import { freePort, runCampaignd, stopAllProcesses, type Proc } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, type Workspace } from './daemon-fixture.js';

let ws: Workspace | null = null;
let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = null;
  await drop?.();
  drop = null;
});

describe('the API on two instances of one PostgreSQL database', () => {
  it('answers a retried POST with the first answer at either instance, dials a lead posted to the standby at once, and honours a revocation on both', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const sim = await startSimulator({ token: SECRETS.token, callDuration: '1-2' });
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'crm', leads: [], maxParallel: 5, maxRetries: 0, retryInterval: 60 }] });
    const campaignFile = path.join(ws.dir, 'campaigns', 'crm.yaml');
    fs.writeFileSync(campaignFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(campaignFile, 'utf8')), mark_complete_when_no_leads: false }, null, 2));
    const url = new URL(database.url);
    const password = decodeURIComponent(url.password);
    url.password = '';
    const env = { ...daemonEnv(), CAMPAIGND_DATABASE: url.toString(), PGPASSWORD: password };
    const base = fs.readFileSync(ws.configPath, 'utf8').replace(/^database: .*$/m, '') + 'ha:\n  lease_seconds: 3\n';
    const ports = [ws.httpPort, await freePort()];
    const configs = ports.map((port, i) => {
      const configPath = path.join(ws!.dir, `campaignd-${i}.yaml`);
      fs.writeFileSync(configPath, base.replace(/listen: 127\.0\.0\.1:\d+/, `listen: 127.0.0.1:${port}`));
      return configPath;
    });
    const created = await runCampaignd(['api-key', 'create', 'crm', '--scope', 'write', '--config', configs[0]!], env);
    expect(created.code, created.stderr).toBe(0);
    const key = /cdk_[A-Za-z0-9_-]{20,}/.exec(created.stdout)![0];
    const instances: Proc[] = [];
    for (const [i, port] of ports.entries()) {
      instances.push(await startDaemon({ ...ws, configPath: configs[i]!, httpPort: port, httpUrl: `http://127.0.0.1:${port}` }, env, `instance-${i}`));
    }
    await sim.setWebhook(`http://127.0.0.1:${ports[0]}/webhooks/post-call?secret=${SECRETS.webhook}`);

    // Which instance holds the lease: the other is the standby.
    const store = await openStore(database.url);
    let activePid: number | null = null;
    try {
      await waitUntil(
        async () => {
          const lease = await readLease(store.db);
          if (!lease?.live) return false;
          activePid = (await store.db.selectFrom('daemons').select('pid').where('instance_id', '=', lease.holder).executeTakeFirst())?.pid ?? null;
          return activePid !== null;
        },
        { timeoutMs: 30_000, message: 'an instance holding the lease' },
      );
    } finally {
      await store.close();
    }
    const standby = instances.findIndex((p) => p.pid !== activePid);
    expect(standby).toBeGreaterThanOrEqual(0);
    const urls = ports.map((p) => `http://127.0.0.1:${p}`);
    const checker = new ResponseChecker(await fetchOpenApi(urls[0]!));
    const clients = urls.map((u) => apiClient(u, checker, key));

    // A lead posted to the standby: the active instance is told through the database and calls it within a second or two.
    const [viaStandby, retried] = numbers(2, 800);
    const postedAt = Date.now();
    const posted = await clients[standby]!.POST('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'crm' } }, body: { phone_number: viaStandby! } });
    expect(posted.data!.items[0]!.outcome).toBe('accepted');
    let calledAt = 0;
    await waitUntil(
      async () => {
        const call = (await sim.calls()).find((c) => c.client_phone_number === viaStandby);
        calledAt = call?.created_at_ms ?? 0;
        return call !== undefined;
      },
      { timeoutMs: 20_000, message: 'the lead posted to the standby was not called' },
    );
    // The goal is one second; the margin is for a loaded test machine.
    expect(calledAt - postedAt).toBeLessThan(3_000);

    // The same POST with one Idempotency-Key at both instances (a balancer retrying elsewhere): one lead.
    const request = { params: { path: { name: 'crm' } }, body: { phone_number: retried!, external_id: 'order-99' }, headers: { 'Idempotency-Key': 'order-99-create' } };
    const [a, b] = await Promise.all(clients.map((c) => c.POST('/api/v1/campaigns/{name}/leads', request)));
    expect(b!.data).toEqual(a!.data);
    const found = await clients[0]!.GET('/api/v1/campaigns/{name}/leads', { params: { path: { name: 'crm' }, query: { external_id: 'order-99' } } });
    expect(found.data!.leads).toHaveLength(1);

    // Revoked from the command line: both instances refuse the key on the next request.
    const revoked = await runCampaignd(['api-key', 'revoke', 'crm', '--config', configs[0]!], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const c of clients) expect((await c.GET('/api/v1/campaigns')).response.status).toBe(401);
  }, 180_000);
});

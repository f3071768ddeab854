// The daemon's API keeps PostgreSQL's planner statistics current (PostgreSQL only:
// test/suites/files.ts): a POST that stores 5,000 leads in a campaign is followed by an
// ANALYZE of leads, in the background (src/store/planner-statistics.ts; why, and the plans
// it fixes: test/integration/postgres-planner-statistics.test.ts).
import fs from 'node:fs';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { testDatabaseTarget } from '../helpers/test-store.js';
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

it('refreshes the planner statistics once a POST to its API stored 5,000 leads in a campaign', async () => {
  const sim = await startSimulator({ token: SECRETS.token });
  ws = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'crm', leads: [], maxParallel: 1, maxRetries: 0, retryInterval: 60, status: 'paused' }] });
  const target = await testDatabaseTarget(ws.dir);
  drop = target.drop;
  const env = { ...daemonEnv(), ...target.env, CAMPAIGND_DATABASE: target.database };
  fs.writeFileSync(ws.configPath, fs.readFileSync(ws.configPath, 'utf8').replace(/^database: .*$/m, ''));
  const created = await runCampaignd(['api-key', 'create', 'crm', '--scope', 'write', '--config', ws.configPath], env);
  expect(created.code, created.stderr).toBe(0);
  const key = /cdk_[A-Za-z0-9_-]{20,}/.exec(created.stdout)![0];
  await startDaemon(ws, env);
  const store = await target.open();
  try {
    // Only a manual ANALYZE counts here (autovacuum's own has its own counter).
    const analyzed = async () => Number((await sql<{ n: string }>`select analyze_count as n from pg_stat_user_tables where relname = 'leads'`.execute(store.db)).rows[0]!.n);
    const before = await analyzed();
    const post = await fetch(`${ws.httpUrl}/api/v1/campaigns/crm/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(numbers(5_000, 100).map((phone_number) => ({ phone_number }))),
    });
    expect(post.status).toBe(200);
    await waitUntil(async () => (await analyzed()) > before, { timeoutMs: 10_000, message: 'an ANALYZE of leads after the POST' });
  } finally {
    await store.close();
  }
});

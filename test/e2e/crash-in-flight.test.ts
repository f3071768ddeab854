// Rule 6, the two crash moments of issue 4 made deterministic. (1) The simulator holds
// every make_call request for 1.5 s and the daemon is killed while its attempts are
// committed as "dialing" with the requests on the wire: the service never creates those
// calls, so the restarted daemon must settle them as never placed and dial each person
// once. (2) The simulator creates calls but drops every answer, and the daemon is killed
// the moment a call exists: the next daemon must find the calls in the call list instead
// of dialing the people again.
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { assertCampaignRules, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type CampaignSpec, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

async function dialingAttempts(dbPath: string): Promise<number> {
  const store = openDatabase(dbPath, { readonly: true });
  try {
    return (await store.db.selectFrom('attempts').select('id').where('state', '=', 'dialing').execute()).length;
  } finally {
    await store.close();
  }
}

describe('campaignd run killed while make_call requests are in flight', () => {
  it('cut-off requests are settled as never placed; calls whose answer died with the daemon are found, not placed again', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 13 });
    const spec: CampaignSpec = { name: 'inflight', leads: numbers(4).map((n) => [n]), maxParallel: 2, maxRetries: 1, retryInterval: 1 };
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [spec], settleSeconds: 5 });
    const workspace = ws;
    await sim.setWebhook(webhookUrl(workspace));
    await sim.control('faults', { path: '/api/user/make_call', latency_ms: 1500 });

    const first = await startDaemon(workspace, daemonEnv());
    await waitUntil(async () => (await dialingAttempts(workspace.dbPath)) === 2, { intervalMs: 20, message: 'two attempts dialing' });
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(first.count(/"msg":"call placed"/)).toBe(0);

    // (2) Every answer lost; killed as soon as the service has created a call.
    await fetch(`${sim.url}/__sim/reset-faults`, { method: 'POST' });
    await sim.control('faults', { path: '/api/user/make_call', drop_after_create: 1 });
    const second = await startDaemon(workspace, daemonEnv(), 'daemon-2');
    await waitUntil(async () => (await sim.calls()).length > 0, { intervalMs: 2, message: 'a call created by daemon-2' });
    second.child.kill('SIGKILL');
    expect(await second.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const orphaned = await sim.calls();
    expect(second.count(/"msg":"call placed"/)).toBe(0);

    await fetch(`${sim.url}/__sim/reset-faults`, { method: 'POST' });
    const third = await startDaemon(workspace, daemonEnv(), 'daemon-3');
    await waitUntil(async () => (await campaignState(workspace, 'inflight')) === 'completed', { timeoutMs: 60_000, intervalMs: 200, message: 'campaign inflight completed' });
    expect(await third.stop()).toEqual({ code: 0, signal: null });
    const calls = await sim.calls();
    await assertCampaignRules(workspace, [spec], calls);
    // The orphaned calls were taken as the attempts they were: the lead that each one
    // reached is not called again unless its outcome asked for a retry (checked above),
    // and the crash in (1) cost nobody a call.
    expect(orphaned.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(spec.leads.length * (1 + spec.maxRetries));
  }, 90_000);
});

// The HTTP surface and a rejected token: /healthz answers while /readyz says 503 and
// nothing is dialled; a fixed token file plus SIGHUP makes /readyz 200 and dialing
// resume; /metrics holds the campaignd_* series. No token (right or wrong) in any line.
import fs from 'node:fs';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/types.js';
import { httpGet, runCampaignd, spawnCampaignd, stopAllProcesses, waitForHttp } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { assertNoSecrets, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

const WRONG_TOKEN = 'tok-WRONG-e2e-91f3a7-DO-NOT-LOG';

describe('campaignd run: health, readiness, metrics and a rejected token', () => {
  it('stays up without dialing on a bad token, and resumes after the token file is fixed and SIGHUP', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 9 });
    const nums = numbers(3);
    ws = await makeWorkspace({
      simUrl: sim.url,
      campaigns: [{ name: 'gamma', leads: nums.map((n) => [n]), maxParallel: 3, maxRetries: 0, retryInterval: 1 }],
      tokenInFile: WRONG_TOKEN,
    });
    const workspace = ws;
    await sim.setWebhook(webhookUrl(workspace));

    // The wrong token in the environment too: the file wins, and neither may be logged.
    const daemon = await startDaemon(workspace, { ...daemonEnv(null), CAMPAIGND_API_TOKEN: WRONG_TOKEN });
    expect((await httpGet(`${workspace.httpUrl}/healthz`)).status).toBe(200);
    await waitForHttp(`${workspace.httpUrl}/readyz`, 503);
    const rejected = await runCampaignd(['status', '--json', '--config', workspace.configPath]);
    expect(rejected.code).not.toBe(0);
    const report = JSON.parse(rejected.stdout) as StatusReport;
    expect(report.daemon).toMatchObject({ running: true, api: 'token-rejected' });
    expect(await sim.calls()).toEqual([]);
    expect(daemon.running()).toBe(true);

    fs.writeFileSync(workspace.tokenFile!, `${SECRETS.token}\n`);
    daemon.child.kill('SIGHUP');
    await waitForHttp(`${workspace.httpUrl}/readyz`, 200);
    await waitUntil(async () => (await campaignState(workspace, 'gamma')) === 'completed', { timeoutMs: 60_000, intervalMs: 200, message: 'campaign gamma completed' });
    expect((await sim.calls()).map((c) => c.client_phone_number).sort()).toEqual([...nums].sort());

    const metrics = await httpGet(`${workspace.httpUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^campaignd_calls_placed_total\{[^}]*\} 3$/m);
    expect(metrics.body).toMatch(/^# TYPE campaignd_live_calls gauge$/m);
    expect(metrics.body).toMatch(/^campaignd_api_requests_total\{[^}]*endpoint="make_call"[^}]*\} \d+$/m);
    expect(metrics.body).toMatch(/^campaignd_api_requests_total\{[^}]*status="401"[^}]*\} \d+$/m);

    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    assertNoSecrets([daemon.stdout(), daemon.stderr(), rejected.stdout, rejected.stderr, metrics.body], 'the daemon output');
    for (const t of [daemon.stdout(), daemon.stderr(), rejected.stdout, metrics.body]) expect(t).not.toContain(WRONG_TOKEN);
  }, 90_000);

  it('fails before dialing when its HTTP port is taken (a supervisor restarting it places no call)', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 10 });
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'delta', leads: numbers(3).map((n) => [n]), maxParallel: 3, maxRetries: 0, retryInterval: 1 }] });
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(Number(new URL(ws!.httpUrl).port), '127.0.0.1', resolve));
    try {
      const daemon = spawnCampaignd('daemon', ['run', '--config', ws.configPath], { env: daemonEnv() });
      const exit = await daemon.exited;
      expect(exit.code).not.toBe(0);
      expect(daemon.stdout() + daemon.stderr()).toMatch(/EADDRINUSE|address (is )?(already )?in use/i);
      expect(await sim.calls()).toEqual([]);
      // Nothing was claimed either: no attempt waits to be recovered as unknown.
      expect(await campaignState(ws, 'delta')).toBe('running');
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  }, 60_000);
});

// SIGHUP: a campaign file added and a live-call limit raised while a call is live take
// effect (status --json shows them, dialing follows them) without dropping the live call.
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/types.js';
import { maxConcurrent } from '../helpers/invariants.js';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import {
  assertCampaignRules,
  assertNoSecrets,
  campaignState,
  daemonEnv,
  makeWorkspace,
  numbers,
  observed,
  SECRETS,
  startDaemon,
  startSimulator,
  webhookUrl,
  type CampaignSpec,
  type Workspace,
} from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('campaignd run: SIGHUP reload', () => {
  it('picks up a new campaign and a higher limit without dropping the live call', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 4 });
    const nums = numbers(10);
    const alpha: CampaignSpec = { name: 'alpha', leads: nums.slice(0, 7).map((n) => [n]), maxParallel: 1, maxRetries: 0, retryInterval: 1 };
    const beta: CampaignSpec = { name: 'beta', leads: nums.slice(7).map((n) => [n]), maxParallel: 2, maxRetries: 0, retryInterval: 1 };
    // The first call rings and talks long enough to be live across the reload.
    await sim.control('outcomes', { phone_number: nums[0], status: 'completed', answered_by: 'human', duration: 6, count: 1 });
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [alpha] });
    const workspace = ws;

    const daemon = await startDaemon(workspace, daemonEnv());
    await sim.setWebhook(webhookUrl(workspace));
    await waitUntil(async () => (await sim.calls()).some((c) => c.client_phone_number === nums[0]), { message: 'the first call' });

    const raised: CampaignSpec = { ...alpha, maxParallel: 3 };
    workspace.writeCampaign(raised);
    workspace.writeCampaign(beta);
    const hupAt = Date.now();
    daemon.child.kill('SIGHUP');
    await daemon.waitForLine(/"msg":"reload done"/);
    const liveAtReload = (await sim.calls()).filter((c) => c.finished_at_ms === null);
    expect(liveAtReload.map((c) => c.client_phone_number)).toContain(nums[0]);

    const status = await runCampaignd(['status', '--json', '--config', workspace.configPath]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.daemon.running).toBe(true);
    expect(report.campaigns.map((c) => [c.name, c.max_calls_in_parallel])).toEqual([
      ['alpha', 3],
      ['beta', 2],
    ]);
    expect(report.campaigns[1]?.leads.total).toBe(3);

    await waitUntil(async () => (await campaignState(workspace, 'alpha')) === 'completed' && (await campaignState(workspace, 'beta')) === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: 'alpha and beta completed',
    });
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    const calls = await sim.calls();

    // The call live at the reload ran to its planned end and its outcome was recorded.
    const first = calls.find((c) => c.client_phone_number === nums[0])!;
    expect(first.status).toBe('completed');
    expect(daemon.count(/"source":"webhook","msg":"call ended"/)).toBeGreaterThanOrEqual(1);
    // The higher limit is used: alpha had more than one call live at once after the reload.
    const alphaAfter = observed(calls.filter((c) => c.created_at_ms >= hupAt && nums.slice(0, 7).includes(c.client_phone_number)));
    expect(maxConcurrent(alphaAfter).max).toBeGreaterThanOrEqual(2);
    expect(calls.some((c) => nums.slice(7).includes(c.client_phone_number))).toBe(true);
    await assertCampaignRules(workspace, [raised, beta], calls);
    assertNoSecrets([daemon.stdout(), daemon.stderr(), status.stdout, status.stderr], 'the daemon output');
  }, 120_000);
});

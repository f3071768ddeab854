// What an operator does to a running daemon, each a real process: `status --json` while it
// runs and after it stops (counts equal to the simulator's), `explain` reasons, `campaign
// pause` / `resume` taking effect within a second, a second daemon on the same database
// refused with exit 3, and no secret in any output.
import { afterEach, describe, expect, it } from 'vitest';
import type { Explanation } from '../../src/explain/explain.js';
import type { StatusReport } from '../../src/status/types.js';
import { callClass } from '../helpers/invariants.js';
import { runCampaignd, spawnCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import {
  assertCampaignRules,
  assertNoSecrets,
  campaignState,
  daemonEnv,
  makeWorkspace,
  numbers,
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

describe('operating a running daemon', () => {
  it('status, explain, pause/resume, a refused second daemon, and no secret anywhere', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 3 });
    const nums = numbers(6);
    const spec: CampaignSpec = { name: 'ops', leads: nums.map((n) => [n]), maxParallel: 3, maxRetries: 0, retryInterval: 1 };
    // The first three calls talk long enough that no slot frees before the pause.
    for (const n of nums.slice(0, 3)) await sim.control('outcomes', { phone_number: n, status: 'completed', answered_by: 'human', duration: 5, count: 1 });
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [spec] });
    const workspace = ws;
    const cli = (...args: string[]) => runCampaignd([...args, '--config', workspace.configPath]);
    const outputs: string[] = [];

    const daemon = await startDaemon(workspace, daemonEnv());
    await sim.setWebhook(webhookUrl(workspace));
    await waitUntil(async () => (await sim.calls()).length >= 3, { message: 'the first three calls' });

    // Pause: no call may be created from 1.5 s after the command returned while paused.
    const pause = await cli('campaign', 'pause', 'ops');
    const pausedAt = Date.now();
    expect(pause).toMatchObject({ code: 0, stdout: 'campaign "ops": running → paused\n' });

    // Four processes at once while paused: status, explain (JSON and text), and a second
    // daemon on the same database, which must be refused in one line with exit 3.
    const second = spawnCampaignd('daemon-2', ['run', '--config', workspace.configPath], { env: daemonEnv() });
    const [running, explained, human] = await Promise.all([cli('status', '--json'), cli('explain', nums[5]!, '--json'), cli('explain', nums[5]!)]);
    outputs.push(running.stdout, running.stderr, explained.stdout, explained.stderr, human.stdout, human.stderr);
    expect(running.code).toBe(0);
    const live = JSON.parse(running.stdout) as StatusReport;
    expect(live.daemon).toMatchObject({ running: true, pid: daemon.pid, api: 'ok' });
    expect(live.campaigns[0]).toMatchObject({ name: 'ops', state: 'paused', max_calls_in_parallel: 3, leads: { total: 6 } });

    // The last lead cannot have been reached yet: explain says the campaign is paused.
    expect(explained.code).toBe(0);
    const why = JSON.parse(explained.stdout) as Explanation;
    expect(why.daemon_running).toBe(true);
    expect(why.leads).toHaveLength(1);
    expect(why.leads[0]).toMatchObject({ campaign: 'ops', state: 'pending', reason: 'campaign-paused' });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('campaign "ops" is paused');

    const secondExit = await second.exited;
    expect(secondExit.code).toBe(3);
    expect(second.stderr().trim().split('\n')).toHaveLength(1);
    expect(second.stderr()).toMatch(/database is in use by another campaignd \(pid \d+/);
    expect(daemon.running()).toBe(true);

    // Live calls of the paused campaign finish; the observation lasts until then and at least 3 s.
    await waitUntil(async () => Date.now() - pausedAt >= 3000 && (await sim.calls()).every((c) => c.finished_at_ms !== null), { message: 'live calls to finish while paused' });
    const whilePaused = await sim.calls();
    expect(whilePaused.filter((c) => c.created_at_ms >= pausedAt + 1500)).toEqual([]);
    expect(await campaignState(workspace, 'ops')).toBe('paused');

    expect(await cli('campaign', 'resume', 'ops')).toMatchObject({ code: 0, stdout: 'campaign "ops": paused → running\n' });
    const resumedAt = Date.now();
    await waitUntil(async () => (await sim.calls()).length > whilePaused.length, { message: 'a call after resume' });
    const firstAfterResume = (await sim.calls())[whilePaused.length]!;
    // Within a second of the command (plus slack for this busy 2-core machine).
    expect(firstAfterResume.created_at_ms - resumedAt).toBeLessThan(1500);
    await waitUntil(async () => (await campaignState(workspace, 'ops')) === 'completed', { timeoutMs: 60_000, intervalMs: 200, message: 'campaign ops completed' });

    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    const calls = await sim.calls();
    await assertCampaignRules(workspace, [spec], calls);

    const stopped = await cli('status', '--json');
    outputs.push(stopped.stdout, stopped.stderr);
    expect(stopped.code).toBe(0);
    const after = JSON.parse(stopped.stdout) as StatusReport;
    expect(after.daemon).toMatchObject({ running: false, pid: daemon.pid });
    expect(after.daemon.stopped_at).not.toBeNull();
    // The budget's counters outlive the daemon in its row (written with each heartbeat).
    expect(after.daemon.api_requests.sent).toBeGreaterThanOrEqual(calls.length);
    // Counts equal to the simulator's record: one attempt per call, leads by outcome of their call.
    const reached = calls.filter((c) => callClass(c.status, c.answered_by) === 'success').length;
    expect(after.campaigns[0]).toMatchObject({
      state: 'completed',
      live_calls: 0,
      attempts: { total: calls.length },
      leads: { total: 6, completed: reached, reached_max_retries: 6 - reached, pending: 0, calling: 0 },
    });

    assertNoSecrets([...outputs, daemon.stdout(), daemon.stderr(), second.stdout(), second.stderr()], 'daemon, status or explain output');
  }, 150_000);
});

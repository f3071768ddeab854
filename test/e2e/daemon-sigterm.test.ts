// SIGTERM while calls are live: the daemon stops claiming, records everything and exits
// 0 within 10 s; restarted on the same database it finishes the campaign, and the
// simulator's own record shows every dialing rule kept across the restart.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { stopAllProcesses } from '../helpers/processes.js';
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

describe('campaignd run: SIGTERM with live calls, then restart', () => {
  it('exits 0 within 10 s, and the restarted daemon finishes without extra calls', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 7 });
    const nums = numbers(11);
    // Two leads with a secondary contact, so a restart also has to keep the contact order.
    const leads = nums.slice(0, 7).map((n) => [n]);
    leads.push([nums[7]!, nums[8]!], [nums[9]!, nums[10]!]);
    const spec: CampaignSpec = { name: 'spring', leads, maxParallel: 6, maxRetries: 1, retryInterval: 1 };
    ws = await makeWorkspace({ simUrl: sim.url, campaigns: [spec] });
    const workspace = ws;

    const first = await startDaemon(workspace, daemonEnv());
    await sim.setWebhook(webhookUrl(workspace));
    // Calls are live: the simulator has at least two calls it has not finished.
    await waitUntil(async () => (await sim.calls()).filter((c) => c.finished_at_ms === null).length >= 2, {
      timeoutMs: 20_000,
      message: async () => `two live calls; simulator: ${JSON.stringify((await sim.calls()).map((c) => [c.id, c.status]))}; daemon:\n${first.stdout().slice(-3000)}`,
    });
    const sentAt = Date.now();
    first.child.kill('SIGTERM');
    const exit = await first.exited;
    const tookMs = Date.now() - sentAt;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(10_000);
    expect(first.stdout()).toContain('"msg":"stopped cleanly"');
    expect((await sim.calls()).some((c) => c.finished_at_ms === null)).toBe(true);

    // Which leads were final when the first daemon stopped: they must get no call later.
    const store = openDatabase(workspace.dbPath, { readonly: true });
    const finalAtStop = await store.db
      .selectFrom('attempts')
      .innerJoin('leads', 'leads.id', 'attempts.lead_id')
      .select('attempts.phone_number')
      .where('leads.state', 'in', ['completed', 'reached-max-retries'])
      .execute();
    await store.close();
    const finalNumbers = new Set(finalAtStop.map((r) => r.phone_number));

    const restartedAt = Date.now();
    const second = await startDaemon(workspace, daemonEnv(), 'daemon-2');
    await waitUntil(async () => (await campaignState(workspace, 'spring')) === 'completed', { timeoutMs: 60_000, intervalMs: 200, message: 'campaign spring completed' });
    expect(await second.stop()).toEqual({ code: 0, signal: null });

    const calls = await sim.calls();
    const late = calls.filter((c) => c.created_at_ms >= restartedAt && finalNumbers.has(c.client_phone_number));
    expect(late).toEqual([]);
    await assertCampaignRules(workspace, [spec], calls);
    expect(calls.every((c) => c.finished_at_ms !== null)).toBe(true);

    // Rule 6 and the operator's promises: no secret in any output, a private database.
    assertNoSecrets([first.stdout(), first.stderr(), second.stdout(), second.stderr()], 'the daemon output');
    expect(fs.statSync(workspace.dbPath).mode & 0o777).toBe(0o600);
  }, 120_000);
});

// A daemon (re)started while the service is still answering 429 — the live limit is per
// account, so a restart after a crash can meet it — must wait as told and start, not
// die. Found black-box: with every pending request held only by the rate budget's
// timer, Node saw an empty event loop during start-up and the daemon exited with code
// 13 (an unsettled top-level await) before it ever listened.
import { afterEach, describe, expect, it } from 'vitest';
import { assertCampaignRulesShowingCalls, assertNoSecrets, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, webhookUrl, type CampaignSpec, type Workspace } from '../e2e/daemon-fixture.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { recordedFromFake, setFakeWebhook, startFake } from './fake-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('black-box: start-up against a service that answers 429', () => {
  it('waits out 429s naming their wait in the header, then in the body, and dials', async () => {
    const fake = await startFake({ token: SECRETS.token, seed: 12, rateLimit: 'off', outcomes: 'human=1' });
    const spec: CampaignSpec = { name: 'startup', leads: numbers(3).map((n) => [n]), maxParallel: 3, maxRetries: 0, retryInterval: 1 };
    ws = await makeWorkspace({ simUrl: fake.url, campaigns: [spec], serverTimezone: fake.serverTimezone, assistantId: fake.assistantId, rateLimit: { perMinute: 80, burst: 5 } });
    const workspace = ws;
    await setFakeWebhook(fake, SECRETS.token, webhookUrl(workspace));
    // The daemon's first two requests are refused with a 1 s wait in the header, the next
    // two with one in the body; then the service is calm.
    await fake.setWaves([{ rules: [{ rate_limited_header: 1, retry_after: 1, times: 2 }, { rate_limited_body: 1, retry_after: 1, times: 2 }] }]);

    const daemon = await startDaemon(workspace, daemonEnv());
    await waitUntil(async () => (await campaignState(workspace, 'startup')) === 'completed', { timeoutMs: 30_000, intervalMs: 100, message: () => `campaign startup completed; daemon tail:\n${daemon.stdout().slice(-2000)}` });
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    const { injected } = await fake.stats();
    expect(injected.rate_limited_header).toBe(2);
    expect(injected.rate_limited_body).toBe(2);
    await assertCampaignRulesShowingCalls(workspace, [spec], recordedFromFake(await fake.calls()));
    assertNoSecrets([daemon.stdout(), daemon.stderr()], 'the daemon output');
  }, 60_000);
});

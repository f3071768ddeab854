// docs/design.md §5 black-box: the independent fake answers a bad token the way
// some deployments are reported to (docs/simulator.md), with a 302 to a login page (our simulator
// answers 401 unless told otherwise). The daemon must take the redirect as "token
// rejected" without following it or hanging: stay up, place no call, say so on /readyz,
// and recover once the token file is fixed and SIGHUP rereads it.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { assertCampaignRulesShowingCalls, assertNoSecrets, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, webhookUrl, type CampaignSpec, type Workspace } from '../e2e/daemon-fixture.js';
import { stopAllProcesses, waitForHttp } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { recordedFromFake, setFakeWebhook, startFake } from './fake-fixture.js';

const WRONG_TOKEN = 'tok-WRONG-3f9a1c-DO-NOT-LOG';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('black-box: a token answered with a 302 redirect', () => {
  it('stops dialing without following the redirect, and recovers after the token file is fixed and SIGHUP', async () => {
    const fake = await startFake({ token: SECRETS.token, seed: 11, rateLimit: '100/min', outcomes: 'human=1' });
    const spec: CampaignSpec = { name: 'redirect', leads: numbers(2).map((n) => [n]), maxParallel: 2, maxRetries: 1, retryInterval: 1 };
    ws = await makeWorkspace({ simUrl: fake.url, campaigns: [spec], tokenInFile: WRONG_TOKEN, serverTimezone: fake.serverTimezone, assistantId: fake.assistantId, rateLimit: { perMinute: 80, burst: 5 } });
    const workspace = ws;
    await setFakeWebhook(fake, SECRETS.token, webhookUrl(workspace));

    const daemon = await startDaemon(workspace, daemonEnv(null));
    await waitForHttp(`${workspace.httpUrl}/readyz`, 503);
    expect((await fake.stats()).redirects).toBeGreaterThan(0);
    expect(await fake.calls()).toHaveLength(0);
    expect(daemon.running()).toBe(true);

    fs.writeFileSync(workspace.tokenFile!, `${SECRETS.token}\n`);
    daemon.child.kill('SIGHUP');
    await waitForHttp(`${workspace.httpUrl}/readyz`, 200);
    await waitUntil(async () => (await campaignState(workspace, 'redirect')) === 'completed', { timeoutMs: 30_000, intervalMs: 100, message: () => `campaign redirect completed; daemon tail:\n${daemon.stdout().slice(-2000)}` });
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });

    await assertCampaignRulesShowingCalls(workspace, [spec], recordedFromFake(await fake.calls()));
    // The redirect was never followed to the login page.
    expect((await fake.stats()).login_page_views).toBe(0);
    assertNoSecrets([daemon.stdout(), daemon.stderr()], 'the daemon output');
    expect(`${daemon.stdout()}${daemon.stderr()}`).not.toContain(WRONG_TOKEN);
  }, 60_000);
});

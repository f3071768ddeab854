// A rejected token's advice fits where the daemon reads it: a token file is rewritten and
// the daemon sent SIGHUP; an environment variable cannot change under a running process, so
// the daemon is restarted with the new value. The daemon records where its token comes
// from (never the token) and `status`, a separate process, says it once.
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaignd, stopAllProcesses, waitForHttp } from '../helpers/processes.js';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

const WRONG_TOKEN = 'tok-WRONG-advice-5d1e-DO-NOT-LOG';

async function rejectedStatus(tokenInFile: boolean): Promise<{ code: number; text: string }> {
  const sim = await startSimulator({ token: SECRETS.token });
  ws = await makeWorkspace({
    simUrl: sim.url,
    campaigns: [{ name: 'c', leads: numbers(1).map((n) => [n]), maxParallel: 1, maxRetries: 0, retryInterval: 1 }],
    ...(tokenInFile ? { tokenInFile: WRONG_TOKEN } : {}),
  });
  const daemon = await startDaemon(ws, tokenInFile ? daemonEnv(null) : daemonEnv(WRONG_TOKEN));
  await waitForHttp(`${ws.httpUrl}/readyz`, 503);
  const status = await runCampaignd(['status', '--config', ws.configPath]);
  await daemon.stop();
  for (const t of [status.stdout, status.stderr, daemon.stdout(), daemon.stderr()]) expect(t).not.toContain(WRONG_TOKEN);
  return { code: status.code, text: status.stdout + status.stderr };
}

describe('status: what to do about a rejected token', () => {
  it('read from CAMPAIGND_API_TOKEN: restart with the new value, said once', async () => {
    const { code, text } = await rejectedStatus(false);
    expect(code).toBe(1);
    expect(text).toContain('no working API token: the service refuses it (401, 403, a redirect or an HTML page); the token is read from $CAMPAIGND_API_TOKEN: restart the daemon');
    expect(text).not.toMatch(/SIGHUP|token file/);
    expect(text.match(/401, 403/g)).toHaveLength(1);
  }, 60_000);

  it('read from api.token_file: write it and send SIGHUP, said once', async () => {
    const { code, text } = await rejectedStatus(true);
    expect(code).toBe(1);
    expect(text).toContain(`no working API token: the service refuses it (401, 403, a redirect or an HTML page); the token is read from ${ws!.tokenFile} (api.token_file): write the working token there and send SIGHUP`);
    expect(text).not.toMatch(/restart/);
    expect(text.match(/401, 403/g)).toHaveLength(1);
  }, 60_000);
});

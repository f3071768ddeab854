// `campaignd run` refuses to put an unguarded dashboard on the network: a listen address
// that is not loopback needs http.dashboard_token_env, and the variable it names must be
// set. Refused at start (exit 2, one clear line naming the file and the fix), before the
// database is opened or a port bound.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaignd } from '../helpers/processes.js';
import { daemonEnv, makeWorkspace, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

async function workspaceListening(listen: string, tokenEnv?: string): Promise<Workspace> {
  const w = await makeWorkspace({ simUrl: 'http://127.0.0.1:9', campaigns: [{ name: 'c', leads: [['+15552000000']], maxParallel: 1, maxRetries: 0, retryInterval: 1 }] });
  const yaml = fs.readFileSync(w.configPath, 'utf8').replace(/^ {2}listen: .+$/m, `  listen: ${listen}${tokenEnv ? `\n  dashboard_token_env: ${tokenEnv}` : ''}`);
  fs.writeFileSync(w.configPath, yaml);
  return w;
}

describe('dashboard exposure at start', () => {
  it('refuses a non-loopback listen address without a dashboard token', async () => {
    ws = await workspaceListening("0.0.0.0:0");
    const r = await runCampaignd(['run', '--config', ws.configPath], daemonEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^${ws.configPath}:\\d+:\\d+ http\\.listen: 0\\.0\\.0\\.0 is not a loopback address, and the dashboard has no token — set http\\.dashboard_token_env`, 'm'));
    expect(fs.existsSync(ws.dbPath)).toBe(false);
  });

  it('refuses a dashboard_token_env naming an empty variable, even on loopback', async () => {
    ws = await workspaceListening('127.0.0.1:0', 'CAMPAIGND_DASHBOARD_TOKEN');
    const r = await runCampaignd(['run', '--config', ws.configPath], { ...daemonEnv(), CAMPAIGND_DASHBOARD_TOKEN: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('http.dashboard_token_env: names CAMPAIGND_DASHBOARD_TOKEN, but that environment variable is empty or not set');
    expect(fs.existsSync(ws.dbPath)).toBe(false);
  });
});

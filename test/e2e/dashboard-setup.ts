// What the dashboard's browser test and its screenshot script share: a simulator and a
// real daemon process (the compiled bin) with the dashboard guarded by a token, and a
// headless Chromium from the @sparticuz/chromium npm package driven by playwright-core.
// Nothing is downloaded at run time: the browser ships inside the package (it unpacks
// to /tmp on first use).
import fs from 'node:fs';
import chromiumBinary from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';
import type { Proc } from '../helpers/processes.js';
import { daemonEnv, makeWorkspace, SECRETS, startDaemon, startSimulator, webhookUrl, type CampaignSpec, type SimProcess, type Workspace } from './daemon-fixture.js';

export const DASHBOARD_TOKEN = 'dash-E2E-5b0e7d13-DO-NOT-LOG';
export const DASHBOARD_TOKEN_ENV = 'CAMPAIGND_DASHBOARD_TOKEN';

export interface DashboardScenario {
  sim: SimProcess;
  ws: Workspace;
  daemon: Proc;
  url: string;
}

/** The simulator, a workspace whose daemon file names the dashboard token variable, and the daemon. */
export async function startDashboardScenario(opts: { campaigns: CampaignSpec[]; seed?: number; callDuration?: string; before?: (sim: SimProcess) => Promise<void> }): Promise<DashboardScenario> {
  const sim = await startSimulator({ token: SECRETS.token, seed: opts.seed ?? 5, ...(opts.callDuration ? { callDuration: opts.callDuration } : {}) });
  await opts.before?.(sim);
  const ws = await makeWorkspace({ simUrl: sim.url, campaigns: opts.campaigns });
  // The fixture writes `http:\n  listen: …`; the token variable goes under it.
  const yaml = fs.readFileSync(ws.configPath, 'utf8');
  const withToken = yaml.replace(/^( {2}listen: .+)$/m, `$1\n  dashboard_token_env: ${DASHBOARD_TOKEN_ENV}`);
  if (withToken === yaml) throw new Error('could not add http.dashboard_token_env to the daemon file');
  fs.writeFileSync(ws.configPath, withToken);
  const daemon = await startDaemon(ws, { ...daemonEnv(), [DASHBOARD_TOKEN_ENV]: DASHBOARD_TOKEN });
  await sim.setWebhook(webhookUrl(ws));
  return { sim, ws, daemon, url: ws.httpUrl };
}

/**
 * Chromium from the npm package. A browser that cannot start is an error, never a
 * reason to skip: the dashboard's tests would otherwise pass without a browser.
 */
export async function launchBrowser(): Promise<Browser> {
  let executablePath: string;
  try {
    executablePath = await chromiumBinary.executablePath();
  } catch (err) {
    throw new Error(`@sparticuz/chromium could not unpack its Chromium (is the package installed? npm ci): ${String(err)}`);
  }
  try {
    return await chromium.launch({ executablePath, args: chromiumBinary.args, headless: true });
  } catch (err) {
    throw new Error(`Chromium at ${executablePath} did not start: ${String(err)}`);
  }
}

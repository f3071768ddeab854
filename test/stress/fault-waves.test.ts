// Issue 6 "Faults", black-box: a real daemon against a simulator answering with waves of
// 5xx, 429 (header and body waits), latency and dropped make_call connections. Under the
// simulator's emulated rate limit with the daemon's budget set below it, the daemon never
// trips the limiter; in every wave it finishes each lead and keeps every dialing rule.
import { afterEach, describe, expect, it } from 'vitest';
import { assertCampaignRules, assertNoSecrets, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type CampaignSpec, type Workspace } from '../e2e/daemon-fixture.js';
import { httpGet, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

interface Wave {
  seed: number;
  simArgs: string[];
  faults: Record<string, unknown>[];
  budget: { perMinute: number; burst: number };
}

/** Runs one campaign of 30 leads through the wave; returns the daemon's final /metrics text. */
async function runWave(w: Wave): Promise<string> {
  const sim = await startSimulator({ token: SECRETS.token, seed: w.seed, extra: w.simArgs });
  const spec: CampaignSpec = { name: 'waves', leads: numbers(30).map((n) => [n]), maxParallel: 5, maxRetries: 1, retryInterval: 1 };
  ws = await makeWorkspace({ simUrl: sim.url, campaigns: [spec], settleSeconds: 5, rateLimit: w.budget });
  const workspace = ws;
  // The webhook is set before the faults, which would answer the test's own request too.
  await sim.setWebhook(webhookUrl(workspace));
  for (const f of w.faults) await sim.control('faults', f);
  const daemon = await startDaemon(workspace, daemonEnv());
  await waitUntil(async () => (await campaignState(workspace, 'waves')) === 'completed', {
    timeoutMs: 240_000,
    intervalMs: 250,
    message: () => `campaign waves completed; daemon tail:\n${daemon.stdout().slice(-3000)}`,
  });
  const metrics = (await httpGet(`${workspace.httpUrl}/metrics`)).body;
  expect(await daemon.stop()).toEqual({ code: 0, signal: null });
  await assertCampaignRules(workspace, [spec], await sim.calls());
  assertNoSecrets([daemon.stdout(), daemon.stderr()], 'the daemon output');
  return metrics;
}

const rateLimited = (metrics: string): number => Number(/^campaignd_api_rate_limited_total (\d+)/m.exec(metrics)?.[1] ?? NaN);

describe('fault waves against a real daemon (stress)', () => {
  it('5xx, latency and lost answers under the emulated limit: finishes, and never trips the limiter', async () => {
    const metrics = await runWave({
      seed: 31,
      simArgs: ['--rate-limit', '100/min'],
      faults: [
        { server_error: 0.1, server_status: 502, latency_ms: 50 },
        { path: '/api/user/make_call', drop_after_create: 0.1 },
      ],
      // 5 + 80/min stays under both of the simulator's windows (20 per 10 s, 100 per minute).
      budget: { perMinute: 80, burst: 5 },
    });
    expect(rateLimited(metrics)).toBe(0);
    expect(metrics).toMatch(/^campaignd_api_requests_total\{[^}]*status="502"[^}]*\} \d+$/m);
  });

  it('429 waves with Retry-After and 503s: finishes with every rule kept', async () => {
    const metrics = await runWave({
      seed: 32,
      simArgs: [],
      faults: [{ rate_limited: 0.25, retry_after: 1 }, { server_error: 0.1, server_status: 503 }],
      budget: { perMinute: 600, burst: 30 },
    });
    expect(rateLimited(metrics)).toBeGreaterThan(0);
  });
});

// Issue 6 "Faults": a real daemon finishing one campaign against a service answering
// with waves of 5xx, 429 (header and body waits), latency, reset connections and
// make_call answers lost after the call was created. The service is campaignd's
// simulator or the independent black-box fake (service-under-test.ts). With the
// service's emulated rate limit on and the daemon's budget below it, the daemon must
// never trip the limiter. Shared by test/stress/fault-waves.test.ts and the short
// black-box profile in test/blackbox.
import { httpGet } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import {
  assertCampaignRulesShowingCalls,
  assertNoSecrets,
  campaignState,
  daemonEnv,
  makeWorkspace,
  numbers,
  startDaemon,
  unconfirmedSuccesses,
  webhookUrl,
  type CampaignSpec,
  type RecordedCall,
  type Workspace,
} from './daemon-fixture.js';
import { startService, type FaultWave, type ServiceKind } from './service-under-test.js';

export interface WaveScenario {
  service: ServiceKind;
  seed: number;
  /** The service emulates the live limit (100/min, 20 per 10 s). */
  rateLimit: boolean;
  waves: FaultWave[];
  /** The daemon's api.rate_limit. */
  budget: { perMinute: number; burst: number };
  leads?: number;
  voicemail?: boolean;
  finishTimeoutMs?: number;
}

export interface WaveReport {
  /** The daemon's /metrics text once the campaign was done and the faults cleared. */
  metrics: string;
  /** 429s the daemon counted (campaignd_api_rate_limited_total). */
  daemonRateLimited: number;
  /** 429s the service's own limiter sent; null when the service does not say. */
  limiterRefusals: number | null;
  /** 429s the service injected as faults; null when the service does not say. */
  injected429s: number | null;
  /** The service's own counters when it keeps them (for failure messages). */
  serviceStats: unknown;
  calls: RecordedCall[];
}

/** campaignd_api_rate_limited_total from a /metrics text (NaN when absent). */
export function rateLimitedTotal(metrics: string): number {
  return Number(/^campaignd_api_rate_limited_total (\d+)/m.exec(metrics)?.[1] ?? NaN);
}

/**
 * Runs one campaign through the waves and checks every rule from the service's record
 * and that no secret reached the daemon's output; the caller asserts on the report and
 * cleans up (stopAllProcesses, the workspace) in afterEach.
 */
export async function runFaultWaves(w: WaveScenario, onWorkspace: (ws: Workspace) => void): Promise<WaveReport> {
  const service = await startService(w.service, { seed: w.seed, rateLimit: w.rateLimit, voicemail: w.voicemail ?? false });
  const spec: CampaignSpec = { name: 'waves', leads: numbers(w.leads ?? 30).map((n) => [n]), maxParallel: 5, maxRetries: 1, retryInterval: 1 };
  const ws = await makeWorkspace({ simUrl: service.url, campaigns: [spec], settleSeconds: 5, rateLimit: w.budget, serverTimezone: service.serverTimezone, assistantId: service.assistantId });
  onWorkspace(ws);
  // The webhook is set before the faults, which would answer the test's own request too.
  await service.setWebhook(webhookUrl(ws));
  await service.setFaults(w.waves);
  const daemon = await startDaemon(ws, daemonEnv());
  await waitUntil(async () => (await campaignState(ws, 'waves')) === 'completed' && (!w.voicemail || (await unconfirmedSuccesses(ws)) === 0), {
    timeoutMs: w.finishTimeoutMs ?? 240_000,
    intervalMs: 250,
    message: async () => `campaign waves completed; ${service.kind} calls ${(await service.calls()).length}; daemon tail:\n${daemon.stdout().slice(-3000)}`,
  });
  await service.clearFaults();
  // Every injected 429 the service sent must reach the daemon's count; a request in
  // flight when the faults were cleared may still be on its way.
  const injected = await service.injected429s();
  let metrics = '';
  await waitUntil(
    async () => {
      metrics = (await httpGet(`${ws.httpUrl}/metrics`)).body;
      return injected === null || rateLimitedTotal(metrics) >= injected;
    },
    { timeoutMs: 10_000, intervalMs: 100, message: () => `daemon 429 count ${rateLimitedTotal(metrics)} to reach the ${injected} 429s injected` },
  );
  const exit = await daemon.stop();
  if (exit.code !== 0) throw new Error(`the daemon exited ${JSON.stringify(exit)} after SIGTERM`);
  const calls = await service.calls();
  await assertCampaignRulesShowingCalls(ws, [spec], calls);
  assertNoSecrets([daemon.stdout(), daemon.stderr()], 'the daemon output');
  return {
    metrics,
    daemonRateLimited: rateLimitedTotal(metrics),
    limiterRefusals: await service.limiterRefusals(),
    injected429s: await service.injected429s(),
    serviceStats: await service.stats(),
    calls,
  };
}

// Rule 6 under crashes: a real daemon killed with SIGKILL at seeded random moments during
// one campaign, against a service that drops a share of make_call connections after
// creating the call, restarted after each kill until the campaign completes. The service
// is campaignd's simulator or the independent black-box fake (service-under-test.ts).
// Shared by the short profiles (test/e2e, test/blackbox) and the test/stress profile.
import { mulberry32 } from '../../src/simulator/random.js';
import { type Proc } from '../helpers/processes.js';
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
import { startService, type ServiceKind } from './service-under-test.js';

export interface CrashScenario {
  /** The service the daemon calls (default: the simulator). */
  service?: ServiceKind;
  /** Answering machines pick up some calls; the end waits until the daemon confirmed every webhook success. */
  voicemail?: boolean;
  /** Service options beyond the seed: make_call names the call; the call list's page size cap (fake). */
  callIdInAnswer?: boolean;
  maxPerPage?: number;
  seed: number;
  kills: number;
  leads: number;
  /** Share of make_call connections dropped after the call was created. */
  dropShare: number;
  maxParallel: number;
  maxRetries: number;
  /** Real milliseconds to wait for completion after the last restart. */
  finishTimeoutMs: number;
}

/** What happened, for the test's own assertions and its failure messages. */
export interface CrashReport {
  /** The service's own record of every call. */
  calls: RecordedCall[];
  daemons: Proc[];
  killedExits: { code: number | null; signal: NodeJS.Signals | null }[];
  unknownAnswers: number;
  /** The service's own counters, when it keeps them. */
  serviceStats: unknown;
  workspace: Workspace;
}

const ACTIVITY = /"msg":"(call placed|call ended|make_call answer lost[^"]*)"/;

/**
 * Runs the scenario to the end and checks every rule from the service's record; the
 * caller cleans the workspace and kills leftovers (stopAllProcesses) in afterEach.
 */
export async function runCrashScenario(s: CrashScenario, onWorkspace: (ws: Workspace) => void): Promise<CrashReport> {
  const rand = mulberry32(s.seed);
  const service = await startService(s.service ?? 'simulator', {
    seed: s.seed,
    voicemail: s.voicemail ?? false,
    callIdInAnswer: s.callIdInAnswer ?? false,
    ...(s.maxPerPage ? { maxPerPage: s.maxPerPage } : {}),
  });
  await service.setFaults([{ rules: [{ path: '/api/user/make_call', dropAfterCreate: s.dropShare }] }]);
  const nums = numbers(s.leads + Math.ceil(s.leads / 5));
  const leads: string[][] = [];
  let next = 0;
  for (let i = 0; i < s.leads; i++) {
    // Every fifth lead has a secondary contact: a crash must not break the contact order.
    leads.push(i % 5 === 4 ? [nums[next++]!, nums[next++]!] : [nums[next++]!]);
  }
  const spec: CampaignSpec = { name: 'crash', leads, maxParallel: s.maxParallel, maxRetries: s.maxRetries, retryInterval: 1 };
  const ws = await makeWorkspace({ simUrl: service.url, campaigns: [spec], settleSeconds: 5, serverTimezone: service.serverTimezone, assistantId: service.assistantId });
  onWorkspace(ws);

  const daemons: Proc[] = [];
  const killedExits: CrashReport['killedExits'] = [];
  for (let k = 0; k <= s.kills; k++) {
    const daemon = await startDaemon(ws, daemonEnv(), `daemon-${k}`);
    daemons.push(daemon);
    if (k === 0) await service.setWebhook(webhookUrl(ws));
    if (k === s.kills) break;
    // A random moment: after 1–4 more things happened in this process, plus up to 400 ms.
    const target = 1 + Math.floor(rand() * 4);
    await waitUntil(() => daemon.count(ACTIVITY) >= target || !daemon.running(), { timeoutMs: 30_000, intervalMs: 5, message: `${target} dialing events in daemon-${k}` });
    await new Promise<void>((resolve) => setTimeout(resolve, Math.floor(rand() * 400)));
    daemon.child.kill('SIGKILL');
    killedExits.push(await daemon.exited);
  }
  const last = daemons[daemons.length - 1]!;
  await waitUntil(async () => (await campaignState(ws, 'crash')) === 'completed' && (!s.voicemail || (await unconfirmedSuccesses(ws)) === 0), {
    timeoutMs: s.finishTimeoutMs,
    intervalMs: 200,
    message: async () => `campaign crash completed${s.voicemail ? ' and every webhook success confirmed' : ''}; ${service.kind} calls ${(await service.calls()).length}; daemon tail:\n${last.stdout().slice(-3000)}`,
  });
  const exit = await last.stop();
  if (exit.code !== 0) throw new Error(`the last daemon exited ${JSON.stringify(exit)} after SIGTERM`);
  const calls = await service.calls();
  await assertCampaignRulesShowingCalls(ws, [spec], calls);
  assertNoSecrets(daemons.flatMap((d) => [d.stdout(), d.stderr()]), 'the daemon output');
  const unknownAnswers = daemons.reduce((n, d) => n + d.count(/make_call answer lost/), 0);
  return { calls, daemons, killedExits, unknownAnswers, serviceStats: await service.stats(), workspace: ws };
}

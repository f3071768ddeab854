// Rule 6, long profile: eight SIGKILLs during each of several seeded campaigns of 40 leads
// (secondary contacts, two retries) while the service drops 15 % of make_call connections
// after creating the call. Same checks as test/e2e/crash-sigkill.test.ts, against
// campaignd's simulator and, black-box, against the independent fake service: one run
// with answering machines (whose voicemails only the call list reveals), one with
// call_id in make_call's answer and a call list served 10 calls a page.
import { afterEach, describe, expect, it } from 'vitest';
import { runCrashScenario, type CrashScenario } from '../e2e/crash-scenario.js';
import type { Workspace } from '../e2e/daemon-fixture.js';
import { stopAllProcesses } from '../helpers/processes.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

const RUNS: Pick<CrashScenario, 'service' | 'seed' | 'voicemail' | 'callIdInAnswer' | 'maxPerPage'>[] = [
  { service: 'simulator', seed: 21 },
  { service: 'simulator', seed: 22 },
  { service: 'simulator', seed: 23 },
  { service: 'fake', seed: 21, voicemail: true },
  { service: 'fake', seed: 22, callIdInAnswer: true, maxPerPage: 10 },
];

describe('campaignd run killed with SIGKILL many times (stress)', () => {
  for (const run of RUNS) {
    const extras = [run.voicemail && 'voicemail', run.callIdInAnswer && 'call_id answers', run.maxPerPage && `${run.maxPerPage} calls a page`].filter(Boolean);
    it(`${run.service} seed ${run.seed}: 8 kills, 40 leads, 15 % lost make_call answers${extras.map((e) => `, ${e}`).join('')}`, async () => {
      const report = await runCrashScenario(
        { ...run, kills: 8, leads: 40, dropShare: 0.15, maxParallel: 6, maxRetries: 2, finishTimeoutMs: 480_000 },
        (w) => (ws = w),
      );
      expect(report.killedExits).toHaveLength(8);
      expect(report.killedExits.every((e) => e.signal === 'SIGKILL')).toBe(true);
      expect(report.calls.length).toBeGreaterThanOrEqual(40);
      expect(report.unknownAnswers).toBeGreaterThan(0);
    });
  }
});

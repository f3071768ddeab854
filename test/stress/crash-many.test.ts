// Rule 6, long profile: eight SIGKILLs during each of three seeded campaigns of 40 leads
// (secondary contacts, two retries) while the simulator drops 15 % of make_call
// connections after creating the call. Same checks as test/e2e/crash-sigkill.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { runCrashScenario } from '../e2e/crash-scenario.js';
import type { Workspace } from '../e2e/daemon-fixture.js';
import { stopAllProcesses } from '../helpers/processes.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('campaignd run killed with SIGKILL many times (stress)', () => {
  for (const seed of [21, 22, 23]) {
    it(`seed ${seed}: 8 kills, 40 leads, 15 % lost make_call answers`, async () => {
      const report = await runCrashScenario(
        { seed, kills: 8, leads: 40, dropShare: 0.15, maxParallel: 6, maxRetries: 2, finishTimeoutMs: 240_000 },
        (w) => (ws = w),
      );
      expect(report.killedExits).toHaveLength(8);
      expect(report.killedExits.every((e) => e.signal === 'SIGKILL')).toBe(true);
      expect(report.calls.length).toBeGreaterThanOrEqual(40);
      expect(report.unknownAnswers).toBeGreaterThan(0);
    });
  }
});

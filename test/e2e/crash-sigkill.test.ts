// Rule 6, short profile for `npm test`: three SIGKILLs during one campaign while the
// simulator drops 20 % of make_call connections after creating the call. The longer
// profile (more kills, more leads, several seeds) is in test/stress.
import { afterEach, describe, expect, it } from 'vitest';
import { stopAllProcesses } from '../helpers/processes.js';
import { runCrashScenario } from './crash-scenario.js';
import type { Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('campaignd run killed with SIGKILL at random moments', () => {
  it('completes the campaign after restarts without calling anyone twice', async () => {
    const report = await runCrashScenario(
      { seed: 5, kills: 3, leads: 8, dropShare: 0.2, maxParallel: 5, maxRetries: 1, finishTimeoutMs: 60_000 },
      (w) => (ws = w),
    );
    expect(report.killedExits).toEqual(Array.from({ length: 3 }, () => ({ code: null, signal: 'SIGKILL' })));
    // The test means something only if calls were live when the daemon died, and lost answers happened.
    expect(report.calls.length).toBeGreaterThanOrEqual(8);
    expect(report.unknownAnswers).toBeGreaterThan(0);
  }, 150_000);
});

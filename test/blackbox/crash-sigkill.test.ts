// Rule 6 black-box, short profile for `npm test`: the crash scenario of
// test/e2e/crash-sigkill.test.ts run against the independent fake service instead of
// campaignd's simulator. Three SIGKILLs during one campaign while the fake drops 20 % of
// make_call connections after creating the call and serves the call list 4 calls a page
// (so every poll pages); judged from the FAKE's record.
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

describe('black-box: campaignd run killed with SIGKILL against the independent fake', () => {
  it('completes the campaign after restarts without calling anyone twice', async () => {
    const report = await runCrashScenario(
      { service: 'fake', seed: 10, maxPerPage: 4, kills: 3, leads: 8, dropShare: 0.2, maxParallel: 5, maxRetries: 1, finishTimeoutMs: 60_000 },
      (w) => (ws = w),
    );
    expect(report.killedExits).toEqual(Array.from({ length: 3 }, () => ({ code: null, signal: 'SIGKILL' })));
    // Meaningful only if calls were live when the daemon died and answers were lost.
    expect(report.calls.length).toBeGreaterThanOrEqual(8);
    expect(report.unknownAnswers).toBeGreaterThan(0);
    // The call list was read past its first page.
    const pages = (report.serviceStats as { call_list_pages: Record<string, number> }).call_list_pages;
    expect(pages['2'], JSON.stringify(pages)).toBeGreaterThan(0);
  }, 150_000);
});

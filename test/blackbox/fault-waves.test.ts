// Issue 6 "Faults" black-box, short profile for `npm test`: a real daemon finishes a
// campaign against the independent fake service while the fake answers with 502s,
// header-only and body-only 429s, connection resets, latency, HTML 503s and lost
// make_call answers (every kind at once, met in the same order in every run), under the
// fake's own limit (20 in any 10 s, 100 in any 60 s) with the daemon's budget below it: the
// test's own requests on the same token (the webhook URL) count at the fake and not in the
// daemon's budget (see test/stress/fault-waves.test.ts). The long profile (cycling
// waves, more leads, voicemail) is in test/stress/fault-waves.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { Workspace } from '../e2e/daemon-fixture.js';
import { runFaultWaves } from '../e2e/fault-wave-scenario.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { MIXED_FAULTS } from './fault-plans.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

describe('black-box: fault waves against the independent fake', () => {
  it('finishes every lead, calls nobody twice and never trips the limiter', async () => {
    const report = await runFaultWaves(
      { service: 'fake', seed: 1, rateLimit: true, waves: MIXED_FAULTS, budget: { perMinute: 80, burst: 15 }, leads: 4, finishTimeoutMs: 50_000 },
      (w) => (ws = w),
    );
    const stats = JSON.stringify(report.serviceStats);
    expect(report.limiterRefusals, stats).toBe(0);
    // The waves did reach the daemon: it counted exactly the 429s the fake injected.
    expect(report.injected429s, stats).toBeGreaterThan(0);
    expect(report.daemonRateLimited, stats).toBe(report.injected429s);
    const injected = (report.serviceStats as { injected: Record<string, number> }).injected;
    expect(injected, stats).toMatchObject({ reset: expect.any(Number), server_error: expect.any(Number) });
    expect(injected.reset, stats).toBeGreaterThan(0);
    expect(injected.server_error, stats).toBeGreaterThan(0);
    expect(report.metrics).toMatch(/^campaignd_api_requests_total\{[^}]*status="50[23]"[^}]*\} \d+$/m);
  }, 90_000);
});

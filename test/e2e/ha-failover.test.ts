// Issue 12's chaos test (PostgreSQL only, in `npm run test:slow`: vitest.slow.config.ts): two instances on one
// database behind a load-balancing webhook proxy, 4 SIGKILLs of whichever is active and one
// SIGSTOP past the lease, 10 % of make_call answers lost. Every lead final, zero double dials,
// and each takeover's first call within lease_seconds + 5 s (printed).
import { afterEach, describe, expect, it } from 'vitest';
import { stopAllProcesses } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';
import type { Workspace } from './daemon-fixture.js';
import { runHaScenario } from './ha-scenario.js';

const LEASE_SECONDS = 3;
let ws: Workspace | null = null;
let drop: (() => Promise<void>) | null = null;

afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = null;
  await drop?.();
  drop = null;
});

describe('active and standby on PostgreSQL', () => {
  it('survives 4 kills of the active instance and one freeze past its lease: no double dial, each takeover within lease + 5 s', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const report = await runHaScenario(
      { seed: 12, databaseUrl: database.url, leaseSeconds: LEASE_SECONDS, kills: 4, leads: 80, dropShare: 0.1, maxParallel: 6, finishTimeoutMs: 180_000 },
      (w) => (ws = w),
    );
    console.log(
      `takeovers (failure → first call of the next active instance): ${report.takeovers.map((t) => `${t.cause} ${(t.firstCallMs / 1000).toFixed(2)} s`).join(', ')}; ` +
        `goal ≤ ${LEASE_SECONDS + 5} s; ${report.calls.length} calls; webhooks per instance port ${JSON.stringify(report.proxy.forwarded)}; claims refused by fencing ${report.fencedClaims}`,
    );
    expect(report.takeovers).toHaveLength(5);
    for (const t of report.takeovers) expect(t.firstCallMs).toBeLessThanOrEqual((LEASE_SECONDS + 5) * 1000);
    // Both instances recorded webhooks (the proxy spreads them): each records what it gets.
    expect(Object.values(report.proxy.forwarded).filter((n) => n > 0)).toHaveLength(2);
  }, 300_000);
});

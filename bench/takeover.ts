// `npx tsx bench/takeover.ts [--quick] [--lease SECONDS]` (after `npm run build`; `npm run
// bench` builds): how long calling stops when the active instance dies (issue 12;
// docs/design.md §10). Two real `campaignd run` processes on one PostgreSQL database behind the webhook
// proxy, the simulator answering every make_call; whichever instance is active is killed
// with SIGKILL KILLS times (4, or 1 with --quick; restarted each time, as systemd would), then
// frozen once with SIGSTOP past its lease. Takeover = from the signal to the first "call
// placed" the other instance logs. The chaos scenario of test/e2e/ha-scenario.ts does the
// work, so the campaign must also end with every dialing rule kept (docs/design.md §3: no double dial).
// Lease: ha.lease_seconds as shipped (10 s), 3 s with --quick (as the chaos test), or
// --lease. Goal: each ≤ lease + 5 s. Most of the run is the campaign's calls ringing to
// its end (~2 calls/s at 12 in parallel): the leads are as few as keep calling going
// through every kill and the freeze (a campaign that ended early leaves no call to time).
import os from 'node:os';
import { runHaScenario } from '../test/e2e/ha-scenario.js';
import type { Workspace } from '../test/e2e/daemon-fixture.js';
import { buildIfStale } from '../test/helpers/build.js';
import { stopAllProcesses } from '../test/helpers/processes.js';
import { benchTarget } from './lib/bench-db.js';
import { atMost, isQuick, reportFigure } from './lib/figures.js';
import { fmt, percentile } from './lib/stats.js';

const BENCH = 'takeover';
const quick = isQuick();
const leaseIndex = process.argv.indexOf('--lease');
/** src/config's default for ha.lease_seconds is 10. */
const LEASE_SECONDS = leaseIndex >= 0 ? Number(process.argv[leaseIndex + 1]) : quick ? 3 : 10;
const KILLS = quick ? 1 : 4;
const LEADS = quick ? 40 : 120;
const PARALLEL = 12;

await buildIfStale();
const target = await benchTarget('postgres', 'unused');
let ws: Workspace | null = null;
try {
  console.log(`${BENCH}: two instances on PostgreSQL, ha.lease_seconds ${LEASE_SECONDS}, ${KILLS} SIGKILL${KILLS > 1 ? 's' : ''} + 1 SIGSTOP, ${LEADS} leads${quick ? ' (quick)' : ''}`);
  const report = await runHaScenario(
    { seed: 12, databaseUrl: target.adminUrl!, leaseSeconds: LEASE_SECONDS, kills: KILLS, leads: LEADS, dropShare: 0, maxParallel: PARALLEL, finishTimeoutMs: 300_000 },
    (w) => (ws = w),
  );
  const seconds = (cause: string): number[] => report.takeovers.filter((t) => t.cause === cause).map((t) => t.firstCallMs / 1000);
  const kills = seconds('SIGKILL');
  const stops = seconds('SIGSTOP');
  console.log(`  takeovers after SIGKILL: ${kills.map((s) => `${fmt(s, 2)} s`).join(', ')}; after SIGSTOP: ${stops.map((s) => `${fmt(s, 2)} s`).join(', ')}`);
  console.log(`  ${report.calls.length} calls, no dialing rule (docs/design.md §3) broken; claims refused by fencing ${report.fencedClaims}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const goal = atMost(LEASE_SECONDS + 5, 's');
  const note = `ha.lease_seconds ${LEASE_SECONDS}; failure → first call placed by the other instance`;
  reportFigure(BENCH, 'takeover after SIGKILL, worst', Math.max(...kills), 's', goal, `${note}; ${kills.length} kill${kills.length > 1 ? 's' : ''}`);
  reportFigure(BENCH, 'takeover after SIGKILL, median', percentile(kills, 0.5), 's', goal, note);
  reportFigure(BENCH, 'takeover after SIGSTOP past the lease', Math.max(...stops), 's', goal, `${note}; the frozen instance, woken, dialed no more`);
} finally {
  await stopAllProcesses();
  (ws as Workspace | null)?.cleanup();
  await target.drop();
}

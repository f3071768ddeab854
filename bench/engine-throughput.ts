// `npx tsx bench/engine-throughput.ts [--quick]`: calls placed per second by the real
// engine (durable attempt records, outcomes by webhook) against the simulator with
// near-instant calls, divided by the make_call rate of a plain client loop against the
// same simulator in the same run. Both use a rate budget far above what they reach.
// Goal: ratio ≥ 0.5. `--dialect postgres`: the engine's store is a PostgreSQL database
// (one pooled connection, as the daemon's; claims under a lease's fencing token).
// `--statements`: also counts and times every SQL statement of the engine phase (until
// every call has ended) and prints them per call, most time first (bench/lib/statement-log.ts).
// `--cpu-profile FILE`: writes a V8 CPU profile of the engine phase alone (the baseline
// loops left out) to FILE; `npx tsx bench/profile-summary.ts FILE` sums it by function.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { benchDialect, dialectLabel } from './lib/bench-db.js';
import { atLeast, isQuick, reportFigure } from './lib/figures.js';
import { benchPhone, startBenchStack, waitFor, waitForDone } from './lib/engine-stack.js';
import { installStatementLog } from './lib/statement-log.js';
import { fmt } from './lib/stats.js';

const BENCH = 'engine-throughput';
const quick = isQuick();
const dialect = benchDialect();
const LEADS = quick ? 1_500 : 6_000;
const BASELINE_CALLS = quick ? 1_000 : 3_000;
const LIMIT = 200;
// Calls ring 2–8 s and talk 1 s in simulated time; ×1000 makes that 3–9 real ms, so
// the live-call limit is never what holds the engine back.
const SCALE = 1000;
const statements = process.argv.includes('--statements') ? installStatementLog() : null;
const profileIndex = process.argv.indexOf('--cpu-profile');
const profileFile = profileIndex >= 0 ? process.argv[profileIndex + 1] : undefined;
if (profileIndex >= 0 && !profileFile) throw new Error('--cpu-profile needs a file name');

/** CPU time (user + system, all threads) of this process since `from`, in ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

const stack = await startBenchStack({
  scale: SCALE,
  webhooks: true,
  callIdInResponse: true,
  campaigns: [{ leads: LEADS, settings: { maxCallsInParallel: LIMIT } }],
  outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
  callDurationSeconds: { min: 0, max: 0 },
  dialect,
});
try {
  console.log(`${BENCH}: ${LEADS} leads, limit ${LIMIT} live calls, clock ×${SCALE}, ${dialectLabel(dialect)}${quick ? ' (quick)' : ''}`);
  // The baseline first: a plain loop of make_call at a few concurrencies; its best rate
  // is the denominator (the most the client and simulator can do together here).
  let best = 0;
  let bestConcurrency = 0;
  let phone = 10_000_000;
  for (const concurrency of [1, 8, 32, 128]) {
    const n = concurrency === 1 ? Math.min(500, BASELINE_CALLS) : BASELINE_CALLS;
    let next = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await stack.client.makeCall({ phone_number: benchPhone(phone++), assistant_id: stack.assistantId });
      }),
    );
    const rate = n / ((performance.now() - t0) / 1000);
    console.log(`  plain client loop, concurrency ${concurrency}: ${fmt(rate, 0)} make_call/s, ${fmt(cpuMs(cpu0) / n, 2)} ms CPU per call (client + simulator)`);
    if (rate > best) [best, bestConcurrency] = [rate, concurrency];
  }
  const before = stack.sim.state.calls.size;

  const profiler = profileFile ? new Session() : null;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  statements?.reset();
  const t0 = performance.now();
  await stack.startEngine();
  await waitFor(async () => stack.sim.state.calls.size - before >= LEADS, 10 * 60_000, 5);
  const seconds = (performance.now() - t0) / 1000;
  const engineRate = LEADS / seconds;
  console.log(`  engine: ${LEADS} calls placed in ${fmt(seconds, 2)} s = ${fmt(engineRate, 0)} calls/s, ${fmt(cpuMs(cpu0) / LEADS, 2)} ms CPU per call (engine + client + simulator)`);
  await waitForDone(stack.db, 60_000);
  if (statements) printStatements(statements.stats());
  if (profiler && profileFile) {
    const { profile } = await profiler.post('Profiler.stop');
    fs.writeFileSync(profileFile, JSON.stringify(profile));
    profiler.disconnect();
    console.log(`  CPU profile of the engine phase written to ${profileFile}`);
  }
  const requests = [...stack.requests.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
  console.log(`  client requests over both phases: ${requests}`);
  reportFigure(BENCH, 'engine placed calls/s', engineRate, 'calls/s', undefined, `${LEADS} calls`);
  reportFigure(BENCH, 'plain client make_call/s', best, 'calls/s', undefined, `best of concurrency 1–128: ${bestConcurrency}`);
  reportFigure(BENCH, 'throughput ratio engine ÷ client', engineRate / best, '', atLeast(0.5, ''), `${dialectLabel(dialect)} store`);
} finally {
  await stack.close();
}

/** The engine phase's statements per placed call (the bench's own done-check among them, marked). */
function printStatements(stats: ReturnType<NonNullable<typeof statements>['stats']>): void {
  const total = stats.reduce((a, s) => a + s.count, 0);
  const ms = stats.reduce((a, s) => a + s.ms, 0);
  console.log(`  statements: ${fmt(total / LEADS, 1)} per call, ${fmt(ms / LEADS, 3)} ms per call (${dialect === 'postgres' ? 'round trips' : 'in SQLite'})`);
  for (const s of stats.slice(0, 40)) {
    console.log(`    ${fmt(s.count / LEADS, 2).padStart(6)}/call ${fmt((s.ms * 1000) / LEADS, 0).padStart(5)} µs/call ${fmt((s.ms * 1000) / s.count, 0).padStart(5)} µs each  ${s.sql.slice(0, 150)}`);
  }
}

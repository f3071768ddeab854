// `npx tsx bench/engine-blackbox.ts [--quick] [--dialect sqlite|postgres] [--calls N]
// [--cpu-prof DIR] [--statements]`: issue 25's throughput ratio as a user meets it. The daemon is the REAL
// compiled `campaignd run` in a process of its own (as daemon-memory.ts and accounts.ts run
// it), the simulator another process, and the bench process a plain client; so the daemon's
// CPU is its own core's, not shared with the fake as in engine-throughput.ts (whose
// in-process ratio cannot pass 0.5: see bench/RESULTS.md, "Engine throughput, issue 25").
//
// One run, one simulator (calls end at once: clock ×1000 on its side only, talk 1 s (1 real ms), every
// call answered by a person, webhooks on, `call_id` in make_call's answer, no limiter):
//  1. the plain client: a loop of make_call through campaignd's own service client (its
//     budget far above the rate) at concurrency 1, 8, 32, 128, each call's webhook posted
//     to a bare receiver; the best rate is the denominator, the most a client and this
//     simulator reach together here;
//  2. the daemon on SQLite (and then on PostgreSQL, unless --dialect names one): one
//     campaign of CALLS leads (default 3,000; --quick 1,000), 200 slots, open all day, no
//     retries, a budget of 100,000 requests a minute; its log at info, in a file. Its rate is
//     the simulator's own record: calls created between the first and the last of them
//     (simulated ms ÷ the scale). The run also checks what it must never lose: one call per
//     lead (no double dial) and every lead final.
// Goals (issue 25): SQLite ≥ 0.85 of the plain client; PostgreSQL ≥ 0.5 of SQLite's calls/s
// in the same run. `--cpu-prof DIR` profiles each daemon's whole life into DIR
// (`npx tsx bench/profile-summary.ts FILE` sums a profile by function).
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/log/logger.js';
import { createServiceClient } from '../src/service/client.js';
import { systemClock } from '../src/time/clock.js';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { numbers } from '../test/e2e/daemon-fixture.js';
import { freePort, spawnNode, stopAllProcesses } from '../test/helpers/processes.js';
import { benchTarget, dialectLabel, type BenchDialect } from './lib/bench-db.js';
import { buildCompiledApp } from './lib/compiled-app.js';
import { startDaemon, waitForLog, type DaemonProcess } from './lib/daemon-process.js';
import { HIGH_BUDGET, benchPhone } from './lib/engine-stack.js';
import { atLeast, isQuick, reportFigure } from './lib/figures.js';
import { readProcCpuSeconds, readProcMemory } from './lib/rss.js';
import { serviceCalls } from './lib/service-record.js';
import type { StatementStat } from './lib/statement-log.js';
import { fmt } from './lib/stats.js';

const BENCH = 'engine-blackbox';
const quick = isQuick();
const callsArg = process.argv.indexOf('--calls');
const CALLS = callsArg > 0 ? Number(process.argv[callsArg + 1]) : quick ? 1_000 : 3_000;
if (!(CALLS > 1) || !Number.isInteger(CALLS)) throw new Error(`--calls needs a whole number > 1, got ${String(process.argv[callsArg + 1])}`);
const dialectArg = process.argv.indexOf('--dialect');
const DIALECTS: BenchDialect[] = dialectArg > 0 ? [process.argv[dialectArg + 1] as BenchDialect] : ['sqlite', 'postgres'];
for (const d of DIALECTS) if (d !== 'sqlite' && d !== 'postgres') throw new Error(`--dialect must be sqlite or postgres, not ${String(d)}`);
const profIndex = process.argv.indexOf('--cpu-prof');
const profDir = profIndex >= 0 ? path.resolve(process.argv[profIndex + 1] ?? '') : null;
if (profIndex >= 0 && !process.argv[profIndex + 1]) throw new Error('--cpu-prof needs a folder');
const statements = process.argv.includes('--statements');
const SLOTS = 200;
const SCALE = 1000;
const TOKEN = 'tok-bench-blackbox-DO-NOT-LOG';
const SECRET = 'whsec-bench-blackbox-DO-NOT-LOG';
const loadAverage = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-blackbox-'));
const drops: (() => Promise<void>)[] = [];
let daemon: DaemonProcess | null = null;
const cleanUp = async (): Promise<void> => {
  daemon?.kill();
  await stopAllProcesses();
  for (const drop of drops.splice(0)) await drop().catch(() => undefined);
  // BENCH_KEEP=1 keeps the folder (the daemons' logs) for a look after the run.
  if (process.env.BENCH_KEEP) console.log(`  kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

interface DaemonRun {
  rate: number;
  cpuMsPerCall: number;
  simCpuMsPerCall: number;
  peakRssMb: number;
}

try {
  console.log(`${BENCH}: ${CALLS} calls per daemon run, ${SLOTS} slots, simulator clock ×${SCALE}, ${DIALECTS.map(dialectLabel).join(' and ')}${quick ? ' (quick)' : ''}; load ${loadAverage()}`);
  // pg outside the bundle with --statements: the statement log patches node_modules' pg.
  const compiled = buildCompiledApp(path.join(dir, 'app'), { external: statements ? ['pg'] : [] });
  const nodeEnv: Record<string, string> = compiled.nodeOptions ? { NODE_OPTIONS: compiled.nodeOptions } : {};
  const simArgs = ['simulator', '--port', '0', '--seed', '25', '--time-scale', String(SCALE), '--call-id', '--token', TOKEN, '--log-level', 'warn'];
  simArgs.push('--outcomes', 'human=1,voicemail=0,busy=0,no-answer=0,failed=0', '--call-duration', '1-1');
  const sim = spawnNode('simulator', compiled.entry, simArgs, { env: nodeEnv });
  const simUrl = /(http:\/\/[0-9.]+:\d+)/.exec(await sim.waitForLine(/^simulator listening on http:\/\//, 60_000))![1]!;

  // 1. The plain client. The simulator posts each call's webhook to a bare receiver in this
  // process (it answers 200 and reads nothing), so the simulator does the same work per call
  // as for the daemon; only what the client does with the answers differs.
  const client = createServiceClient({ baseUrl: simUrl, getToken: () => TOKEN, clock: systemClock, logger: silentLogger(), serverTimezone: 'UTC', requestTimeoutMs: 10_000, rateLimit: HIGH_BUDGET });
  const assistantId = Number((await client.listOutboundAssistants())[0]?.id);
  let webhooks = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      webhooks++;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  await client.updateAssistant(assistantId, { is_webhook_active: true, webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/post-call` });
  let best = 0;
  let phone = 0;
  for (const concurrency of [1, 8, 32, 128]) {
    const n = concurrency === 1 ? Math.min(500, CALLS) : CALLS;
    let next = 0;
    const simCpu0 = readProcCpuSeconds(sim.pid) ?? Number.NaN;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await client.makeCall({ phone_number: benchPhone(phone++), assistant_id: assistantId });
      }),
    );
    const rate = n / ((performance.now() - t0) / 1000);
    const simCpu = ((readProcCpuSeconds(sim.pid) ?? Number.NaN) - simCpu0) * 1000;
    console.log(`  plain client, concurrency ${String(concurrency).padStart(3)}: ${fmt(rate, 0).padStart(5)} make_call/s; simulator ${fmt(simCpu / n, 2)} ms CPU per call`);
    best = Math.max(best, rate);
  }
  // Every call of the loops has ended and posted its webhook before a daemon starts.
  while (webhooks < phone) await new Promise((r) => setTimeout(r, 20));
  receiver.close();
  await client.close();

  // 2. The daemon, on each database, against the same simulator.
  const rates = new Map<BenchDialect, DaemonRun>();
  for (const [i, dialect] of DIALECTS.entries()) {
    const run = await daemonRun(i, dialect, compiled.entry, nodeEnv, simUrl, assistantId, sim.pid);
    rates.set(dialect, run);
    const label = dialectLabel(dialect);
    console.log(`  daemon on ${label}: ${fmt(run.rate, 0)} calls/s = ${fmt(run.rate / best, 3)} of the plain client's ${fmt(best, 0)}; daemon ${fmt(run.cpuMsPerCall, 2)} ms CPU per call, simulator ${fmt(run.simCpuMsPerCall, 2)}; RSS peak ${fmt(run.peakRssMb, 0)} MB; load ${loadAverage()}`);
  }
  const note = `${CALLS} calls, ${SLOTS} slots, webhooks on; plain client's best ${fmt(best, 0)} make_call/s; load ${loadAverage()}`;
  const sqlite = rates.get('sqlite');
  const postgres = rates.get('postgres');
  if (sqlite) reportFigure(BENCH, 'SQLite daemon ÷ plain client (calls/s)', sqlite.rate / best, '', atLeast(0.85, ''), `${fmt(sqlite.rate, 0)} calls/s; ${note}`);
  if (postgres) reportFigure(BENCH, 'PostgreSQL daemon ÷ plain client (calls/s)', postgres.rate / best, '', undefined, `${fmt(postgres.rate, 0)} calls/s; ${note}`);
  if (sqlite && postgres) reportFigure(BENCH, 'PostgreSQL daemon ÷ SQLite daemon (calls/s)', postgres.rate / sqlite.rate, '', atLeast(0.5, ''), 'same run, same simulator');
} finally {
  await cleanUp();
}

/** One daemon on a fresh database dialing CALLS leads of its own; its rate from the simulator's record. */
async function daemonRun(index: number, dialect: BenchDialect, entry: string, nodeEnv: Record<string, string>, simUrl: string, assistantId: number, simPid: number): Promise<DaemonRun> {
  const work = path.join(dir, `${dialect}-${index}`);
  fs.mkdirSync(path.join(work, 'campaigns'), { recursive: true });
  const target = await benchTarget(dialect, path.join(work, 'campaignd.db'));
  drops.push(() => target.drop());
  const httpPort = await freePort();
  // Each run's leads are numbers no other run of this simulator has called.
  const mine = numbers(CALLS, index * 100_000);
  fs.writeFileSync(path.join(work, 'leads.csv'), `phone_number\n${mine.join('\n')}\n`);
  const configPath = path.join(work, 'campaignd.yaml');
  fs.writeFileSync(
    configPath,
    [
      'api:',
      `  base_url: ${simUrl}`,
      // Far above what the run reaches: the daemon's own pace is what is measured.
      '  rate_limit: { requests_per_minute: 100000, burst: 100000, burst_window_seconds: 1 }',
      `database: ${target.database}`,
      'campaigns_dir: ./campaigns',
      `http: { listen: "127.0.0.1:${httpPort}" }`,
      'webhook: { register: true }',
      'log: { level: info }',
      '',
    ].join('\n'),
  );
  const campaign = {
    name: `blackbox-${dialect}`,
    assistant_id: assistantId,
    timezone: 'UTC',
    allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
    allowed_hours_start_time: '00:00:00',
    allowed_hours_end_time: '00:00:00',
    max_calls_in_parallel: SLOTS,
    max_retries: 0,
    retry_interval: 60,
    mark_complete_when_no_leads: true,
    default_country: 'US',
    leads: { file: '../leads.csv' },
  };
  // JSON is YAML.
  fs.writeFileSync(path.join(work, 'campaigns', 'blackbox.yaml'), `${JSON.stringify(campaign, null, 2)}\n`);

  const logFile = path.join(work, 'daemon.log');
  fs.writeFileSync(logFile, '');
  const statementsFile = path.join(work, 'statements.json');
  const preload = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'statement-log-preload.ts');
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const nodeFlags = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...(statements ? ['--import', tsx, '--import', pathToFileURL(preload).href] : [])];
  const env = { ...nodeEnv, ...target.env, CAMPAIGND_API_TOKEN: TOKEN, CAMPAIGND_WEBHOOK_SECRET: SECRET, BENCH_STATEMENTS_FILE: statementsFile };
  const simCpu0 = readProcCpuSeconds(simPid) ?? Number.NaN;
  daemon = startDaemon(entry, nodeFlags, configPath, env, logFile);
  const proc = daemon;
  const cpu0 = readProcCpuSeconds(proc.pid) ?? Number.NaN;
  await waitForLog(logFile, /campaign completed: every lead is final/, proc.exited, 600_000, { everyMs: 50 });
  const cpu = ((readProcCpuSeconds(proc.pid) ?? Number.NaN) - cpu0) * 1000;
  const simCpu = ((readProcCpuSeconds(simPid) ?? Number.NaN) - simCpu0) * 1000;
  const peakRssMb = (readProcMemory(proc.pid)?.hwm ?? Number.NaN) / 1e6;
  // What the daemon asked of the service, by endpoint (its own count, from /metrics).
  const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const byEndpoint = [...metrics.matchAll(/^campaignd_api_requests_total\{([^}]*)\} (\S+)$/gm)].map((m) => `${/endpoint="([^"]*)"/.exec(m[1]!)?.[1] ?? m[1]} ${fmt(Number(m[2]) / CALLS, 2)}`);
  console.log(`  ${dialectLabel(dialect)}: requests per call by endpoint: ${byEndpoint.join(', ')}`);
  proc.stop();
  const code = await proc.exited;
  daemon = null;
  if (code !== 0) throw new Error(`the daemon on ${dialectLabel(dialect)} exited ${String(code)} on SIGTERM: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);

  if (statements) {
    const stats = JSON.parse(fs.readFileSync(statementsFile, 'utf8')) as StatementStat[];
    // A patch that missed the daemon's driver (bundled apart) would print a quiet zero.
    if (stats.length === 0) throw new Error(`--statements counted no statement of the daemon on ${dialectLabel(dialect)}: the statement log did not reach its driver`);
    const totalMs = stats.reduce((n, st) => n + st.ms, 0);
    console.log(`  ${dialectLabel(dialect)}: ${stats.reduce((n, st) => n + st.count, 0)} statements over the daemon's life, ${fmt(totalMs / 1000, 2)} s in the database; per call, most time first:`);
    if (dialect === 'postgres') console.log('    (deferred writes go with the next statement in one exchange, src/store/pg-pipeline.ts: each is timed from that send to its own answer, so their times overlap and include the writes sent before them)');
    for (const st of stats.slice(0, 25)) console.log(`    ${fmt(st.ms / CALLS, 3).padStart(7)} ms  ${fmt(st.count / CALLS, 2).padStart(6)}×  ${st.sql.slice(0, 150)}`);
  }
  const wanted = new Set(mine);
  const placed = (await serviceCalls(simUrl)).filter((c) => wanted.has(c.phone_number));
  const distinct = new Set(placed.map((c) => c.phone_number)).size;
  if (placed.length !== CALLS || distinct !== CALLS) throw new Error(`the daemon on ${dialectLabel(dialect)} placed ${placed.length} calls to ${distinct} of ${CALLS} leads (want one each)`);
  const times = placed.map((c) => c.placed_at_ms).sort((a, b) => a - b);
  const seconds = (times.at(-1)! - times[0]!) / SCALE / 1000;
  // CPU from the daemon's start: the lead import and start-up are in it, so it is an upper bound per call.
  return { rate: (CALLS - 1) / seconds, cpuMsPerCall: cpu / CALLS, simCpuMsPerCall: simCpu / CALLS, peakRssMb };
}

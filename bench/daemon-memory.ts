// `npx tsx bench/daemon-memory.ts [--quick]`: resident memory of the REAL daemon at scale
// (issue 6: ≤ 200 MB with 1,000,000 leads in 100 campaigns; --quick: 200,000 leads and a
// shorter run). Builds the store with big-store.ts, writes the matching config, campaign
// and lead files (big-store-config.ts: the daemon works the stored leads, no re-import),
// then runs the compiled build as the package's bin and both deployments run it
// (bin/campaignd.js on `tsc -p tsconfig.build.json` output, with its #! node flags; until
// issue 11 a tsx variant ran beside it: the bin no longer has a TypeScript loader) on its
// own copy of the store and its own simulator child process:
//  - starts `campaignd run` as a child process and lets it dial for a fixed time;
//  - samples its VmRSS every second from /proc/PID/status, and VmHWM (the kernel's
//    high-water mark, which also catches peaks between samples) at the end;
//  - runs `campaignd status --json` once, half-way, and times it from spawn to exit;
//  - counts the calls it placed (its own /metrics), so the figure is of a working daemon.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { daemonEnv, SECRETS, startSimulator } from '../test/e2e/daemon-fixture.js';
import { freePort, spawnNode, stopAllProcesses, waitForHttp } from '../test/helpers/processes.js';
import { buildBigStore } from './lib/big-store.js';
import { writeBigStoreConfig } from './lib/big-store-config.js';
import { buildCompiledApp } from './lib/compiled-app.js';
import { atMost, isQuick, reportFigure } from './lib/figures.js';
import { readProcMemory } from './lib/rss.js';
import { fmt, percentile } from './lib/stats.js';

const BENCH = 'daemon-memory';
const quick = isQuick();
const LEADS = quick ? 200_000 : 1_000_000;
const CAMPAIGNS = 100;
const DIAL_MS = quick ? 20_000 : 60_000;
const SAMPLE_MS = 1_000;
const PRINT_EVERY = quick ? 5 : 10;
/** Far above what the service allows (100/min), so the daemon works as hard as it can. */
const LOAD = { accountMaxCalls: 100, requestsPerMinute: 6_000, burst: 100 };

interface Variant {
  label: string;
  entry: string;
  /** Extra environment (the compiled entry's node flags, as NODE_OPTIONS). */
  env: Record<string, string>;
}

interface RunResult {
  /** VmRSS right after "campaignd running", MB. */
  startMb: number;
  /** Median VmRSS over the second half of the dialing time, MB. */
  steadyMb: number;
  /** VmHWM at the end of the dialing time, MB. */
  peakMb: number;
  /** The daemon's own figures at the end of the dialing time. */
  end: DaemonMetrics;
  statusMs: number;
}

// MB as the other benchmarks count them (10^6 bytes).
const mb = (bytes: number): number => bytes / 1e6;

/** Sums a metric's samples (every label set) in Prometheus text. */
function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

interface DaemonMetrics {
  placed: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Young generation (both semi-spaces): what --max-semi-space-size bounds. */
  newSpaceMb: number;
}

async function metrics(url: string): Promise<DaemonMetrics> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return {
    placed: metricSum(text, 'campaignd_calls_placed_total'),
    heapUsedMb: mb(metricSum(text, 'campaignd_nodejs_heap_size_used_bytes')),
    heapTotalMb: mb(metricSum(text, 'campaignd_nodejs_heap_size_total_bytes')),
    newSpaceMb: mb(Number(/^campaignd_nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)/m.exec(text)?.[1] ?? Number.NaN)),
  };
}

/** `campaignd status --json` from spawn to exit; checks that it saw every lead. */
async function timedStatus(v: Variant, configPath: string, env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const proc = spawnNode(`status (${v.label})`, v.entry, ['status', '--json', '--config', configPath], { env: { ...v.env, ...env } });
  const exit = await proc.exited;
  const ms = performance.now() - t0;
  // Exit 1 means "a campaign has a problem", which status reports in the document.
  if (exit.code !== 0 && exit.code !== 1) throw new Error(`status exited ${exit.code}: ${proc.stderr().slice(-2000)}`);
  const report = JSON.parse(proc.stdout()) as { campaigns: { leads: { total: number } }[] };
  const total = report.campaigns.reduce((n, c) => n + c.leads.total, 0);
  if (total !== LEADS) throw new Error(`status counted ${total} leads, expected ${LEADS}`);
  return ms;
}

async function runDaemon(v: Variant, configPath: string, dbFile: string, httpPort: number): Promise<RunResult> {
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  // Calls of a few real seconds (ringing 1–8 s, talk 1–2 s), ended by webhooks.
  const sim = await startSimulator({ token: SECRETS.token, seed: 1, callDuration: '1-2' });
  try {
    await sim.setWebhook(`${httpUrl}/webhooks/post-call?secret=${SECRETS.webhook}`);
    const env = { ...v.env, ...daemonEnv(), CAMPAIGND_API_BASE_URL: sim.url, CAMPAIGND_DATABASE: dbFile };
    const daemon = spawnNode(`daemon (${v.label})`, v.entry, ['run', '--config', configPath], { env });
    const samples: { atMs: number; rss: number; hwm: number }[] = [];
    const sample = (): void => {
      const m = readProcMemory(daemon.pid);
      if (m) samples.push({ atMs: performance.now(), ...m });
    };
    const sampler = setInterval(sample, SAMPLE_MS);
    try {
      const spawned = performance.now();
      await daemon.waitForLine(/"msg":"campaignd running"/, 180_000);
      await waitForHttp(`${httpUrl}/healthz`);
      const started = performance.now();
      if (daemon.count(/"msg":"lead file imported"/) > 0) throw new Error('the daemon re-imported lead files: the figure would include an import');
      const startMb = mb(readProcMemory(daemon.pid)?.rss ?? Number.NaN);
      console.log(`  ${v.label}: running after ${fmt((started - spawned) / 1000, 1)} s, RSS ${fmt(startMb, 0)} MB; dialing for ${DIAL_MS / 1000} s`);

      let statusMs = Number.NaN;
      let last: DaemonMetrics | null = null;
      for (let tick = 1; performance.now() - started < DIAL_MS; tick++) {
        await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, Math.max(0, started + DIAL_MS - performance.now()))));
        if (Number.isNaN(statusMs) && performance.now() - started >= DIAL_MS / 2) statusMs = await timedStatus(v, configPath, { CAMPAIGND_DATABASE: dbFile });
        if (tick % PRINT_EVERY === 0) {
          last = await metrics(httpUrl);
          const rss = samples.at(-1)?.rss ?? Number.NaN;
          console.log(`    t ${String(Math.round((performance.now() - started) / 1000)).padStart(3)} s  RSS ${fmt(mb(rss), 0).padStart(4)} MB  JS heap ${fmt(last.heapUsedMb, 0).padStart(3)} used / ${fmt(last.heapTotalMb, 0).padStart(3)} MB (young ${fmt(last.newSpaceMb, 0)})  placed ${last.placed}`);
        }
      }
      sample();
      last = await metrics(httpUrl);
      const peak = readProcMemory(daemon.pid)?.hwm ?? Number.NaN;
      const peakMb = mb(peak);
      // When the high-water mark was reached (to within a sample): start-up or dialing.
      const peakAt = samples.find((s) => s.hwm >= peak)?.atMs;
      console.log(`    peak ${fmt(peakMb, 0)} MB reached ${peakAt === undefined ? 'after the last sample' : `at t ${fmt((peakAt - started) / 1000, 0)} s`} (t 0 = running)`);
      const secondHalf = samples.filter((s) => s.atMs >= started + DIAL_MS / 2).map((s) => s.rss);
      const steadyMb = mb(percentile(secondHalf, 0.5));
      const exit = await daemon.stop(30_000);
      if (exit.code !== 0) throw new Error(`the daemon exited ${exit.code ?? exit.signal} on SIGTERM: ${daemon.stderr().slice(-2000)}`);
      if (last.placed === 0) throw new Error('the daemon placed no call: the figure would be of an idle daemon');
      return { startMb, steadyMb, peakMb, end: last, statusMs };
    } finally {
      clearInterval(sampler);
      if (daemon.running()) await daemon.stop(5_000);
    }
  } finally {
    await sim.proc.stop(5_000);
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-daemon-'));
const cleanUp = async (): Promise<void> => {
  await stopAllProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
};
// An interrupted run leaves neither children nor a gigabyte of temp files behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  console.log(`${BENCH}: ${LEADS.toLocaleString('en')} leads in ${CAMPAIGNS} campaigns, real daemon processes, ${DIAL_MS / 1000} s of dialing each${quick ? ' (quick)' : ''}`);
  const t0 = performance.now();
  const template = path.join(dir, 'template.db');
  const built = await buildBigStore(template, LEADS, CAMPAIGNS, Date.now());
  const httpPort = await freePort();
  const configPath = await writeBigStoreConfig(path.join(dir, 'etc'), { dbFile: template, leads: LEADS, campaigns: CAMPAIGNS, httpPort, ...LOAD });
  console.log(`  built ${built.leads.toLocaleString('en')} leads, ${built.attempts.toLocaleString('en')} attempts, ${fmt(fs.statSync(template).size / 1e6, 0)} MB, with config and lead files, in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  const t1 = performance.now();
  const compiled = buildCompiledApp(path.join(dir, 'app'));
  console.log(`  compiled build in ${fmt((performance.now() - t1) / 1000, 1)} s; the entry's node flags: ${compiled.nodeOptions || 'none'}`);

  const variants: Variant[] = [
    { label: 'compiled', entry: compiled.entry, env: compiled.nodeOptions ? { NODE_OPTIONS: compiled.nodeOptions } : {} },
  ];
  const results = new Map<string, RunResult>();
  for (const v of variants) {
    // Each run starts from the same store.
    const dbFile = path.join(dir, `${v.label}.db`);
    fs.copyFileSync(template, dbFile);
    const r = await runDaemon(v, configPath, dbFile, httpPort);
    results.set(v.label, r);
    fs.rmSync(dbFile, { force: true });
    console.log(`  ${v.label}: peak ${fmt(r.peakMb, 0)} MB, steady ${fmt(r.steadyMb, 0)} MB, ${r.end.placed} calls placed, status --json ${fmt(r.statusMs, 0)} ms`);
  }

  const c = results.get('compiled')!;
  const scale = `${LEADS.toLocaleString('en')} leads`;
  reportFigure(BENCH, 'daemon RSS peak, compiled (bin/campaignd.js)', c.peakMb, 'MB', atMost(200, 'MB'), `VmHWM: start + ${DIAL_MS / 1000} s dialing, ${scale}, ${c.end.placed} calls`);
  reportFigure(BENCH, 'daemon RSS steady, compiled', c.steadyMb, 'MB', undefined, `median VmRSS, 2nd half; ${fmt(c.startMb, 0)} MB after start; JS heap ${fmt(c.end.heapUsedMb, 0)} used / ${fmt(c.end.heapTotalMb, 0)} MB`);
  reportFigure(BENCH, 'calls placed while measured, compiled', c.end.placed, 'calls', undefined, `${DIAL_MS / 1000} s, ≤ ${LOAD.accountMaxCalls} live, ${LOAD.requestsPerMinute}/min budget`);
  reportFigure(BENCH, 'status --json wall time, compiled', c.statusMs, 'ms', undefined, `process start to exit, daemon dialing, ${scale}`);
  console.log(`  load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
} finally {
  await cleanUp();
}

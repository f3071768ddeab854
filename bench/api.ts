// `npx tsx bench/api.ts [--quick] [--dialect sqlite|postgres]`: the API (/api/v1) as a CRM
// meets it — whole HTTP round trips against the REAL daemon (`campaignd run`, the package's
// bin, a child process) dialing the simulator (another child process):
//  1. bulk: POST of 10,000 leads in one request, 5 times (goal ≥ 20,000 leads/s each, judged
//     on the worst), the daemon's peak RSS over the whole run (VmHWM, goal ≤ 300 MB);
//  2. under load: the engine dials a campaign at full speed; its calls per second are
//     measured in windows without and with 200 API requests per second (half single-lead
//     POSTs, half GET /leads/{id}), alternated quiet, loaded, quiet…, so the drop is judged
//     within one run, each loaded window against the quiet ones either side (goal ≤ 10 %);
//     p99 of each request kind under that load (goals 25 ms and 10 ms);
//  3. POST → make_call: a lead posted into a running, open campaign with free slots, until
//     the simulator records its call (goal p99 ≤ 1 s; the dialing campaign is paused).
// Flags: --statements times every SQL statement of the daemon and prints the longest single runs;
// --rps N sets the load (0: no requests, to see how far apart the windows are
// without it); --bin FILE runs that build's bin instead of this tree's (before/after runs against
// another checkout's `npm run build`; a .ts entry that calls main() runs through tsx, so that
// a profile names the sources); --cpu-prof DIR runs the daemon under `node --cpu-prof`
// into DIR and prints each window's bounds on the monotonic clock the profile uses, for
// `npx tsx bench/profile-summary.ts FILE --from US --to US` (--cpu-prof-interval US: its sampling interval).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startSimulator, type SimProcess, type Workspace } from '../test/e2e/daemon-fixture.js';
import { BIN, runCampaignd, spawnNode, stopAllProcesses, waitForHttp, type Proc } from '../test/helpers/processes.js';
import { benchDialect, benchTarget, dialectLabel, type BenchTarget } from './lib/bench-db.js';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { followProcPeak, readProcCpuSeconds } from './lib/rss.js';
import type { StatementStat } from './lib/statement-log.js';
import { fmt, monotonicUs, percentile } from './lib/stats.js';

const BENCH = 'api';
const quick = isQuick();
const dialect = benchDialect();
const BULK_ITEMS = 10_000;
const BULK_RUNS = quick ? 2 : 5;
/** Seconds per measuring window; windows alternate quiet / loaded. */
const WINDOW_S = quick ? 10 : 20;
const WINDOW_PAIRS = quick ? 1 : 3;
const POST_TO_CALL_RUNS = quick ? 10 : 40;
const DIAL_LEADS = quick ? 20_000 : 60_000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const bin = path.resolve(arg('--bin') ?? BIN);
/** API requests per second in the loaded windows; `--rps 0` leaves them quiet too (how much the windows differ unloaded). */
const LOAD_RPS = Number(arg('--rps') ?? 200);
const profileDir = arg('--cpu-prof');
/** The profiler's sampling interval in µs (node's default 1,000: too coarse for stalls of 20 ms). */
const profileInterval = arg('--cpu-prof-interval');
/** `--statements`: every SQL statement the daemon ran, timed (bench/lib/statement-log.ts); the longest single runs are printed. */
const statementsFile = process.argv.includes('--statements') ? path.join(os.tmpdir(), `campaignd-bench-api-statements-${process.pid}.json`) : undefined;

/** `node FLAGS BIN run`: the bin's own node flag (its #! line), and the profiler's when asked. */
async function startBench(ws: Workspace, env: Record<string, string>): Promise<Proc> {
  // A .ts entry runs through tsx, so that a profile names the sources rather than the bundle's chunks.
  const loader = /\.m?ts$/.test(bin) || statementsFile ? ['--import', 'tsx'] : [];
  const preload = statementsFile ? ['--import', new URL('./lib/statement-log-preload.ts', import.meta.url).href] : [];
  const [first, ...rest] = ['--max-semi-space-size=4', ...loader, ...preload, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`, ...(profileInterval ? [`--cpu-prof-interval=${profileInterval}`] : [])] : []), bin, 'run', '--config', ws.configPath];
  const proc = spawnNode('daemon', first!, rest, { env: statementsFile ? { ...env, BENCH_STATEMENTS_FILE: statementsFile } : env });
  await proc.waitForLine(/"msg":"campaignd running"/, 30_000);
  await waitForHttp(`${ws.httpUrl}/healthz`);
  return proc;
}

type Json = Record<string, any>;

async function api(ws: Workspace, key: string, method: string, url: string, body?: unknown): Promise<{ status: number; json: any; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${ws.httpUrl}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  return { status: res.status, json: text ? JSON.parse(text) : undefined, ms };
}

/** The per-item answers of a leads POST (`{items: [...]}`). */
function items(json: any): Json[] {
  return Array.isArray(json?.items) ? (json.items as Json[]) : [];
}

function campaignFile(ws: Workspace, name: string, patch: Json): void {
  const file = path.join(ws.dir, 'campaigns', `${name}.yaml`);
  fs.writeFileSync(file, `${JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as Json), ...patch }, null, 2)}\n`);
}

/** The daemon's longest event-loop delay since the last /metrics read (prom-client resets it on each read). */
async function loopLagMaxMs(ws: Workspace): Promise<number> {
  const text = await (await fetch(`${ws.httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('campaignd_nodejs_eventloop_lag_max_seconds '));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) * 1000 : Number.NaN;
}

async function placedTotal(ws: Workspace, campaign: string): Promise<number> {
  const text = await (await fetch(`${ws.httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('campaignd_calls_placed_total{') && l.includes(`campaign="${campaign}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Microseconds that runnable tasks of this machine have waited for a CPU (/proc/pressure/cpu "some" total; NaN without PSI). */
function cpuStallUs(): number {
  try {
    return Number(/some .*total=(\d+)/.exec(fs.readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/** Calls per second of `campaign` over one window, and the daemon's CPU share, with `load` running meanwhile when given. */
async function dialWindow(ws: Workspace, campaign: string, pid: number, load: (() => Promise<void>) | null): Promise<{ callsPerSecond: number; cpu: number; lagMs: number; clientLagMs: number; clientLagP99Ms: number; cpuPressure: number }> {
  // This process's own event-loop delay: a client that falls behind its schedule adds its
  // own wait to every latency it measures (a busy machine starves it as well as the daemon).
  const clientLag = monitorEventLoopDelay({ resolution: 5 });
  clientLag.enable();
  const pressure0 = cpuStallUs();
  const before = await placedTotal(ws, campaign);
  const cpu0 = readProcCpuSeconds(pid) ?? Number.NaN;
  await loopLagMaxMs(ws);
  const t0 = performance.now();
  const from = monotonicUs();
  let stop = false;
  const loader = load
    ? (async () => {
        // Open loop: one request every 1000/LOAD_RPS ms whatever the answers take, as clients do.
        const inflight = new Set<Promise<void>>();
        const start = performance.now();
        for (let i = 0; !stop; i++) {
          const due = start + (i * 1000) / LOAD_RPS;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const p = load().finally(() => inflight.delete(p));
          inflight.add(p);
        }
        await Promise.all(inflight);
      })()
    : null;
  await sleep(WINDOW_S * 1000);
  stop = true;
  await loader;
  const lagMs = await loopLagMaxMs(ws);
  const after = await placedTotal(ws, campaign);
  const seconds = (performance.now() - t0) / 1000;
  if (profileDir) console.log(`    ${load ? 'loaded' : 'quiet'} window: --from ${from} --to ${monotonicUs()}`);
  clientLag.disable();
  const clientLagMs = clientLag.max / 1e6;
  // The timer's lateness the client's 99th percentile of samples saw: what its own thread adds to a p99.
  const clientLagP99Ms = Math.max(0, clientLag.percentile(99) / 1e6 - 5);
  const cpuPressure = (cpuStallUs() - pressure0) / 1e6 / seconds;
  return {
    clientLagMs,
    clientLagP99Ms,
    cpuPressure, callsPerSecond: (after - before) / seconds, cpu: ((readProcCpuSeconds(pid) ?? Number.NaN) - cpu0) / seconds, lagMs };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-api-'));
  let sim: SimProcess | null = null;
  let ws: Workspace | null = null;
  let target: BenchTarget | null = null;
  let daemon: Proc | null = null;
  try {
    console.log(`${BENCH} (${dialectLabel(dialect)}): the real daemon and simulator as child processes${quick ? ' (quick)' : ''}; ${bin}`);
    sim = await startSimulator({ token: SECRETS.token, seed: 7, callDuration: '1-2' });
    ws = await makeWorkspace({
      simUrl: sim.url,
      rateLimit: { perMinute: 60_000, burst: 1_000 },
      campaigns: [
        { name: 'bulk', leads: [], maxParallel: 1, maxRetries: 0, retryInterval: 60, status: 'paused' },
        { name: 'dial', leads: numbers(DIAL_LEADS, 0).map((n) => [n]), maxParallel: 100, maxRetries: 0, retryInterval: 60 },
        { name: 'fresh', leads: [], maxParallel: 20, maxRetries: 0, retryInterval: 60 },
      ],
    });
    // Campaigns that wait for posted leads must not complete while empty.
    for (const name of ['bulk', 'fresh']) campaignFile(ws, name, { mark_complete_when_no_leads: false });
    fs.appendFileSync(ws.configPath, 'max_calls_in_parallel: 150\n');
    target = await benchTarget(dialect, path.join(dir, 'campaignd.db'));
    const env = { ...daemonEnv(), CAMPAIGND_DATABASE: target.database, ...target.env };
    const created = await runCampaignd(['api-key', 'create', 'bench', '--scope', 'write', '--config', ws.configPath], env);
    const key = /cdk_[A-Za-z0-9_-]+/.exec(created.stdout)?.[0];
    if (!key) throw new Error(`api-key create failed (${created.code}): ${created.stderr}`);
    await sim.setWebhook(`${ws.httpUrl}/webhooks/post-call?secret=${SECRETS.webhook}`);
    const t0 = performance.now();
    daemon = await startBench(ws, env);
    const peak = followProcPeak(daemon.pid);
    console.log(`  daemon running after ${fmt((performance.now() - t0) / 1000, 1)} s (${DIAL_LEADS.toLocaleString('en')} leads imported for the dialing campaign)`);

    // 1. Bulk.
    const rates: number[] = [];
    const ids: number[] = [];
    for (let run = 0; run < BULK_RUNS; run++) {
      const body = numbers(BULK_ITEMS, 1_000_000 + run * BULK_ITEMS).map((phone_number, i) => ({ phone_number, external_id: `crm-${run}-${i}`, variables: { first_name: `Bulk${i}`, plan: 'gold' } }));
      const r = await api(ws, key, 'POST', '/api/v1/campaigns/bulk/leads', body);
      const answers = items(r.json);
      const accepted = answers.filter((a) => a.outcome === 'accepted').length;
      if (r.status >= 300 || accepted !== BULK_ITEMS) throw new Error(`bulk POST answered ${r.status} with ${accepted} accepted: ${JSON.stringify(r.json).slice(0, 400)}`);
      for (const a of answers.slice(0, 200)) ids.push(Number(a.id));
      rates.push(BULK_ITEMS / (r.ms / 1000));
      console.log(`    bulk ${run + 1}: ${BULK_ITEMS.toLocaleString('en')} leads in ${fmt(r.ms, 0)} ms = ${fmt(BULK_ITEMS / (r.ms / 1000), 0)} leads/s`);
    }
    reportFigure(BENCH, `POST 10,000 leads, worst of ${BULK_RUNS} (${dialect})`, Math.min(...rates), 'leads/s', atLeast(20_000, 'leads/s'), 'whole HTTP round trip, JSON array of 10,000 items with external_id and 2 variables');

    // 2. Under load.
    let n = 0;
    const postLat: number[] = [];
    const getLat: number[] = [];
    const failures: string[] = [];
    const slowStarts: { at: number; ms: number }[] = [];
    let loadStart = Number.NaN;
    const load = async (): Promise<void> => {
      const i = n++;
      const began = performance.now();
      if (Number.isNaN(loadStart)) loadStart = began;
      const r =
        i % 2 === 0
          ? await api(ws!, key, 'POST', '/api/v1/campaigns/bulk/leads', { phone_number: numbers(1, 5_000_000 + i)[0], variables: { first_name: `One${i}` } })
          : await api(ws!, key, 'GET', `/api/v1/leads/${ids[i % ids.length]}`);
      (i % 2 === 0 ? postLat : getLat).push(r.ms);
      if (r.ms > 25) slowStarts.push({ at: (began - loadStart) / 1000, ms: r.ms });
      if (r.status >= 300 && failures.length < 5) failures.push(`${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    };
    // Let the dialing campaign reach its pace first.
    await sleep(5_000);
    // Each loaded window is judged against the mean of the quiet windows on either side: the
    // dialing pace drifts over a run (about 6 % between two quiet windows in a row here), and
    // a quiet window always first would count that drift as the load's.
    const quiet: number[] = [];
    const loaded: number[] = [];
    let q = await dialWindow(ws, 'dial', daemon.pid, null);
    for (let pair = 0; pair < WINDOW_PAIRS; pair++) {
      const l = await dialWindow(ws, 'dial', daemon.pid, LOAD_RPS > 0 ? load : null);
      const after = await dialWindow(ws, 'dial', daemon.pid, null);
      quiet.push((q.callsPerSecond + after.callsPerSecond) / 2);
      loaded.push(l.callsPerSecond);
      console.log(
        `    window ${pair + 1}: ${fmt(q.callsPerSecond, 1)} / ${fmt(after.callsPerSecond, 1)} calls/s quiet before / after (daemon CPU ${fmt(q.cpu * 100, 0)} / ${fmt(after.cpu * 100, 0)} %, longest event-loop stall ${fmt(q.lagMs, 0)} / ${fmt(after.lagMs, 0)} ms), ${fmt(l.callsPerSecond, 1)} calls/s under ${LOAD_RPS} API requests/s (CPU ${fmt(l.cpu * 100, 0)} %, stall ${fmt(l.lagMs, 0)} ms; the client's own longest stall ${fmt(l.clientLagMs, 0)} ms, its p99 ${fmt(l.clientLagP99Ms, 1)} ms), load average ${os.loadavg()[0]!.toFixed(1)}, CPU pressure ${fmt(q.cpuPressure * 100, 0)} / ${fmt(l.cpuPressure * 100, 0)} / ${fmt(after.cpuPressure * 100, 0)} % (share of time some task waited for a CPU)`,
      );
      q = after;
    }
    // Where the slow requests fall: spread out (the daemon is busy throughout) or bunched (it stalls).
    const clusters: { at: number; n: number; worst: number }[] = [];
    for (const { at, ms } of slowStarts.sort((a, b) => a.at - b.at)) {
      const last = clusters.at(-1);
      if (last && at - last.at < 0.5) {
        last.n++;
        last.worst = Math.max(last.worst, ms);
      } else clusters.push({ at, n: 1, worst: ms });
    }
    if (clusters.length) console.log(`    requests over 25 ms: ${slowStarts.length}, in bursts (s into the loaded windows × count, worst): ${clusters.map((c) => `${c.at.toFixed(1)}×${c.n} ${fmt(c.worst, 0)} ms`).join(', ')}`);
    if (failures.length) throw new Error(`API requests failed under load: ${failures.join(' | ')}`);
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    const drop = 1 - sum(loaded) / sum(quiet);
    reportFigure(BENCH, `dial loop calls/s without API load (${dialect})`, sum(quiet) / quiet.length, 'calls/s', undefined, `${WINDOW_PAIRS + 1} windows of ${WINDOW_S} s, 100 live calls at most, calls of 1-2 s`);
    reportFigure(BENCH, `dial loop calls/s under ${LOAD_RPS} API req/s (${dialect})`, sum(loaded) / loaded.length, 'calls/s', undefined, `${WINDOW_PAIRS} windows, each between two quiet ones`);
    reportFigure(BENCH, `dial loop drop under API load (${dialect})`, Math.max(0, drop * 100), '%', atMost(10, '%'), 'calls placed per second, each loaded window against the mean of the quiet ones either side');
    reportFigure(BENCH, `single-lead POST p99 under load (${dialect})`, percentile(postLat, 0.99), 'ms', atMost(25, 'ms'), `${postLat.length} requests while the engine dials; p50 ${fmt(percentile(postLat, 0.5), 1)} ms, p90 ${fmt(percentile(postLat, 0.9), 1)} ms`);
    reportFigure(BENCH, `GET /leads/{id} p99 under load (${dialect})`, percentile(getLat, 0.99), 'ms', atMost(10, 'ms'), `${getLat.length} requests while the engine dials; p50 ${fmt(percentile(getLat, 0.5), 1)} ms, p90 ${fmt(percentile(getLat, 0.9), 1)} ms`);

    // 3. POST → make_call, with the dialing campaign paused so the posted lead has free slots.
    const paused = await api(ws, key, 'POST', '/api/v1/campaigns/dial/pause');
    if (paused.status !== 200) throw new Error(`pausing the dialing campaign answered ${paused.status}`);
    const toCall: number[] = [];
    for (let i = 0; i < POST_TO_CALL_RUNS; i++) {
      const phone = numbers(1, 7_000_000 + i)[0]!;
      const sent = Date.now();
      const r = await api(ws, key, 'POST', '/api/v1/campaigns/fresh/leads', { phone_number: phone });
      if (r.status >= 300) throw new Error(`posting a lead answered ${r.status}: ${JSON.stringify(r.json)}`);
      let call: { created_at_ms: number } | undefined;
      for (const deadline = Date.now() + 10_000; !call && Date.now() < deadline; ) {
        call = (await sim.calls()).find((c) => c.client_phone_number === phone);
        if (!call) await sleep(20);
      }
      if (!call) throw new Error(`the lead posted for ${phone} was not called within 10 s`);
      toCall.push(call.created_at_ms - sent);
    }
    reportFigure(BENCH, `POST → make_call p99 (${dialect})`, percentile(toCall, 0.99), 'ms', atMost(1_000, 'ms'), `${POST_TO_CALL_RUNS} leads posted one at a time into an open campaign with free slots; median ${fmt(percentile(toCall, 0.5), 0)} ms`);
    reportFigure(BENCH, `daemon RSS peak (${dialect})`, peak.peak() / 1e6, 'MB', atMost(300, 'MB'), 'VmHWM over the whole run: start, bulk POSTs, load, posts');
    peak.stop();
    console.log(`  load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await daemon?.stop(10_000).catch(() => undefined);
    await stopAllProcesses();
    if (statementsFile && fs.existsSync(statementsFile)) printStatements(statementsFile);
    await target?.drop();
    ws?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The statements whose single longest run was longest: what held the daemon's thread in one go. */
function printStatements(file: string): void {
  const stats = (JSON.parse(fs.readFileSync(file, 'utf8')) as StatementStat[]).sort((a, b) => b.max - a.max);
  fs.rmSync(file, { force: true });
  console.log(`  statements over the daemon's life, longest single run first (max / mean ms, count):`);
  for (const st of stats.slice(0, 15)) console.log(`    ${fmt(st.max, 1)} / ${fmt(st.ms / st.count, 2)} ms ×${st.count}  ${st.sql.slice(0, 140)}`);
}

await main();

// `npx tsx bench/accounts.ts [--quick] [--accounts N] [--seconds S] [--warmup S] [--slots K]
// [--dialect postgres [--instances K [--kills N]]] [--cpu-prof DIR] [--statements]`: one REAL daemon (the compiled bin/campaignd.js `run`, as
// daemon-memory.ts runs it) holding N accounts (default 200; --quick 20), each dialing its
// own campaign at its full budget of 100 requests a minute, against the simulator in its own
// process with N tokens, each limited as the live service is (20 per 10 s, 100 per minute).
// Issue 25's figure: 200 accounts ≈ 333 requests/s for 5 minutes, no limiter tripped, every
// account's slots ≥ 0.9 used while it has due leads, and the daemon's CPU and RSS (≤ 400 MB).
//
// Every figure about the service comes from the simulator's record, not the daemon's word:
//  - requests: each token's limiter counts (GET /__sim/stats/users: allowed + refused);
//  - 429s: what each token's limiter refused (goal: none);
//  - slot utilization of an account: the time-weighted count of its live calls (placed to
//    ended, GET /__sim/conversations) ÷ its max_calls_in_parallel, over the measured window
//    (cut at its last call if its leads ran out, which the lead count below avoids).
// Diagnostics beside the figures (where an account's slot time goes): the refill gaps of full
// accounts, each account's live calls as the daemon counts them against the service's, the
// post-call webhooks' round trips and failures (GET /__sim/webhooks), and on SQLite, per call,
// claimed → placed, placed → answer recorded and ended → the daemon knew (from the store).
// The daemon's CPU is (user + sys) from /proc/PID/stat over the measured window ÷ its
// length (1.0 = one core); its peak RSS is VmHWM from /proc/PID/status (start-up included).
// `--cpu-prof DIR` runs the daemon under `node --cpu-prof` (its whole life, written to DIR
// when it exits); `npx tsx bench/profile-summary.ts DIR/FILE.cpuprofile` sums it by function.
// `--statements` counts and times the daemon's SQL statements over its whole life
// (lib/statement-log-preload.ts) and prints them per call placed, most time first.
// `--daemon-node-options "FLAGS"` adds node flags to the daemons' NODE_OPTIONS, as a unit file's
// environment does (e.g. "--max-old-space-size=256", the heap cap that bounds the RSS).
// `--heap-snapshot DIR` writes the daemon's V8 heap snapshot to DIR at the end of the
// measured window (node --heapsnapshot-signal); `npx tsx bench/heap-summary.ts FILE` sums
// it by constructor, to see what grows with the number of accounts.
//
// `--instances K` (PostgreSQL only): K active instances share the accounts (README, "Several
// active instances"), each its own process with the same accounts; the service posts every
// webhook to a round-robin balancer before them (each instance registers it as
// `webhook.public_url`). The figures are then the instances' together (CPU summed, the peak
// RSS of each), plus the spread of the accounts at the end of the window (goal: none holds
// more than ⌈accounts / K⌉ + 1). Then `--kills N` (default 5): N times, SIGKILL of a random
// instance, restarted at once as a supervisor does; for each, the longest any of its accounts
// waited for its next call, from the simulator's record (goal: lease_seconds + 5 = 15 s).
//
// Measured after a warm-up (--warmup, default 60 s from "campaignd running"): the first
// minute is not the steady state, because the burst window lets 20 go at once and then 20
// every ~11 s, so the minute's 100 are spent in its first 50 s; only once the minute window
// rolls over does each account settle to the rate the 60 s window allows. Windows of whole
// minutes (--seconds 60, 300) measure that rate without the burst pattern's ripple.
//
// The simulated calls, chosen so that an account's budget, not its leads or the simulator,
// is what bounds it, and so that its slots are then (nearly) all in use:
//  - time scale 1: the simulator's limiter runs on its simulated clock, so only at scale 1
//    is its "100 per minute" the real minute the daemon budgets for;
//  - every call answered by a person (outcomes human=1) and talking 8–12 s, after the
//    simulator's 1 s of dialing and 2–8 s of ringing: ~16 s live on average, ended by its
//    post-call webhook. One call per lead (no retries whose retry_interval would leave
//    leads not yet due), and a known mean length;
//  - slots (each account's and its campaign's max_calls_in_parallel, --slots) = 28: the
//    budget (100 requests per 61 s as the daemon counts it, its 1 s margin included, a few
//    of them call listings) places ~1.6 calls/s, which keep ~26 calls live at ~16 s each
//    (Little's law). So the slots are just above what the budget can fill: the budget binds
//    (requests/min at its full rate) and a daemon that keeps up keeps ~0.93 of the slots
//    busy. A daemon that falls behind shows in both figures at once;
//  - leads per account: 1.3 × the calls the whole run can place at that rate, + slots.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, spawnNode, stopAllProcesses, waitForHttp, type Proc } from '../test/helpers/processes.js';
import { startDaemon, waitForLog, type DaemonProcess } from './lib/daemon-process.js';
import { startWebhookProxy, type WebhookProxy } from '../test/helpers/webhook-proxy.js';
import { mulberry32 } from '../src/simulator/random.js';
import { accountHoldings } from '../src/store/account-leases.js';
import { accountName, accountOfNumber, accountTokens, writeAccountsWorkspace } from './lib/accounts-workspace.js';
import { benchDialect, benchTarget, dialectLabel } from './lib/bench-db.js';
import { buildCompiledApp } from './lib/compiled-app.js';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { readProcCpuSeconds, readProcMemory } from './lib/rss.js';
import { refillGaps, requestsBetween, serviceCalls, slotUtilization, userRequests } from './lib/service-record.js';
import type { StatementStat } from './lib/statement-log.js';
import { fmt, percentile } from './lib/stats.js';

const BENCH = 'accounts';
const quick = isQuick();
const dialect = benchDialect();
const argNumber = (flag: string, fallback: number): number => {
  const i = process.argv.indexOf(flag);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!(n > 0) || !Number.isInteger(n)) throw new Error(`${flag} needs a whole number > 0, got ${String(process.argv[i + 1])}`);
  return n;
};
const ACCOUNTS = argNumber('--accounts', quick ? 20 : 200);
const SECONDS = argNumber('--seconds', quick ? 60 : 300);
const WARMUP_SECONDS = argNumber('--warmup', 60);
const SLOTS = argNumber('--slots', 26);
const INSTANCES = argNumber('--instances', 1);
/**
 * `--daemon-node-options "FLAGS"`: added to the daemons' NODE_OPTIONS (not the simulator's), as
 * a unit file's `Environment=NODE_OPTIONS=…` adds them, e.g. `--max-old-space-size=256`
 * (README, "Many accounts": memory).
 */
const DAEMON_NODE_OPTIONS = (() => {
  const i = process.argv.indexOf('--daemon-node-options');
  return i < 0 ? '' : (process.argv[i + 1] ?? '');
})();
const KILLS = INSTANCES > 1 ? (process.argv.includes('--kills') ? argNumber('--kills', 5) : 5) : 0;
if (INSTANCES > 1 && dialect !== 'postgres') throw new Error('--instances needs --dialect postgres (with SQLite one daemon holds every account)');
/** ha.lease_seconds (its default); a killed instance's accounts are due again within this + 5 s. */
const LEASE_SECONDS = 10;
const KILL_GAP_SECONDS = LEASE_SECONDS + 15;
const IN_FLIGHT_GRACE_MS = 200;
/** The service's limit per token, and the daemon's default budget per account. */
const PER_MINUTE = 100;
const LEADS = Math.ceil((1.3 * PER_MINUTE * (WARMUP_SECONDS + SECONDS + KILLS * KILL_GAP_SECONDS)) / 60) + SLOTS;
const UTILIZATION_GOAL = 0.9;
const PROGRESS_MS = 15_000;
const profIndex = process.argv.indexOf('--cpu-prof');
const profDir = profIndex >= 0 ? path.resolve(process.argv[profIndex + 1] ?? '') : null;
if (profIndex >= 0 && !process.argv[profIndex + 1]) throw new Error('--cpu-prof needs a folder');
const statements = process.argv.includes('--statements');
if (statements && INSTANCES > 1) throw new Error('--statements counts one daemon: leave out --instances');
const heapIndex = process.argv.indexOf('--heap-snapshot');
const heapDir = heapIndex >= 0 ? path.resolve(process.argv[heapIndex + 1] ?? '') : null;
if (heapIndex >= 0 && !process.argv[heapIndex + 1]) throw new Error('--heap-snapshot needs a folder');
const mb = (bytes: number): number => bytes / 1e6;
const loadAverage = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');

/** `campaignd simulator` (the compiled entry) with one token per account; resolves with its URL. */
async function startSimulator(entry: string, env: Record<string, string>, tokens: readonly string[]): Promise<{ proc: Proc; url: string }> {
  const args = ['simulator', '--port', '0', '--seed', '25', '--rate-limit', `${PER_MINUTE}/min`];
  args.push('--outcomes', 'human=1,voicemail=0,busy=0,no-answer=0,failed=0', '--call-duration', '8-12', '--log-level', 'warn');
  for (const t of tokens) args.push('--token', t);
  const proc = spawnNode('simulator', entry, args, { env });
  const line = await proc.waitForLine(/^simulator listening on http:\/\//, 60_000);
  return { proc, url: /(http:\/\/[0-9.]+:\d+)/.exec(line)![1]! };
}

/** A metric's value per value of `label`, from /metrics. */
async function metricBy(url: string, name: string, label: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  const re = new RegExp(`^${name}\\{[^}]*${label}="([^"]*)"[^}]*\\} (\\S+)$`);
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (m) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return out;
}

/** A metric's sum over every label set, from /metrics. */
async function metricSum(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-accounts-'));
const target = await benchTarget(dialect, path.join(dir, 'campaignd.db'));
const daemons: DaemonProcess[] = [];
let proxy: WebhookProxy | null = null;
const cleanUp = async (): Promise<void> => {
  for (const d of daemons.splice(0)) d.kill();
  await proxy?.close();
  await stopAllProcesses();
  await target.drop();
  // BENCH_KEEP=1 keeps the folder (the daemons' logs) for a look after the run.
  if (process.env.BENCH_KEEP) console.log(`  kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  console.log(
    `${BENCH}: ${ACCOUNTS} accounts × ${PER_MINUTE} requests/min (${fmt((ACCOUNTS * PER_MINUTE) / 60, 0)} requests/s), ${INSTANCES > 1 ? `${INSTANCES} active instances` : 'one real daemon'}, ${dialectLabel(dialect)}; ` +
      `${SLOTS} slots and ${LEADS} leads per account; ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured${quick ? ' (quick)' : ''}; load average ${loadAverage()}`,
  );
  const t0 = performance.now();
  // pg outside the bundle with --statements: the statement log patches node_modules' pg.
  const compiled = buildCompiledApp(path.join(dir, 'app'), { external: statements ? ['pg'] : [] });
  const nodeEnv: Record<string, string> = compiled.nodeOptions ? { NODE_OPTIONS: compiled.nodeOptions } : {};
  console.log(`  compiled build in ${fmt((performance.now() - t0) / 1000, 1)} s; the entry's node flags: ${compiled.nodeOptions || 'none'}`);

  const httpPorts = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
  const httpUrl = `http://127.0.0.1:${httpPorts[0]}`;
  const sim = await startSimulator(compiled.entry, nodeEnv, accountTokens(ACCOUNTS));
  // A balancer as nginx is by default: an instance that answers slowly is waited for (60 s),
  // not replaced by another after 2 s as the failover tests' is (each retry there is the
  // same delivery applied twice, more work for instances already behind).
  if (INSTANCES > 1) proxy = await startWebhookProxy(httpPorts, { upstreamTimeoutMs: 60_000 });
  const ws = writeAccountsWorkspace({ dir, accounts: ACCOUNTS, leadsPerAccount: LEADS, slots: SLOTS, httpPorts, ...(proxy ? { publicUrl: proxy.url } : {}), baseUrl: sim.url, database: target.database });

  const logFiles = httpPorts.map((_, i) => path.join(dir, `daemon-${i}.log`));
  const logFile = logFiles[0]!;
  const spawned = performance.now();
  // node takes --cpu-prof on its command line only (not in NODE_OPTIONS).
  const statementsFile = path.join(dir, 'statements.json');
  const preload = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'statement-log-preload.ts');
  if (heapDir) fs.mkdirSync(heapDir, { recursive: true });
  const nodeFlags = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...(heapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []), ...(statements ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, '--import', pathToFileURL(preload).href] : [])];
  const daemonNodeOptions = [compiled.nodeOptions, DAEMON_NODE_OPTIONS].filter(Boolean).join(' ');
  if (DAEMON_NODE_OPTIONS) console.log(`  the daemons' NODE_OPTIONS: ${daemonNodeOptions}`);
  const daemonEnv = { ...nodeEnv, ...(daemonNodeOptions ? { NODE_OPTIONS: daemonNodeOptions } : {}), ...target.env, ...ws.env, CAMPAIGND_WEBHOOK_SECRET: 'whsec-bench-accounts-DO-NOT-LOG', BENCH_STATEMENTS_FILE: statementsFile };
  const startInstance = (i: number): DaemonProcess => (daemons[i] = startDaemon(compiled.entry, nodeFlags, ws.configPaths[i]!, daemonEnv, logFiles[i]!));
  for (let i = 0; i < INSTANCES; i++) {
    startInstance(i);
    await waitForLog(logFiles[i]!, /"msg":"campaignd running"/, daemons[i]!.exited, 600_000);
    await waitForHttp(`http://127.0.0.1:${httpPorts[i]}/healthz`);
  }
  const daemon = daemons[0]!;
  const running = performance.now();
  console.log(`  ${INSTANCES > 1 ? `instances ${daemons.map((d) => d.pid).join(', ')}` : `daemon ${daemon.pid}`} running after ${fmt((running - spawned) / 1000, 1)} s (${ACCOUNTS * LEADS} leads imported), RSS ${fmt(mb(readProcMemory(daemon.pid)?.rss ?? Number.NaN), 0)} MB; warming up ${WARMUP_SECONDS} s`);
  await sleep(running + WARMUP_SECONDS * 1000 - performance.now());

  // The measured window.
  const before = await userRequests(sim.url);
  const daemonsCpu = (): number => daemons.reduce((n, d) => n + (readProcCpuSeconds(d.pid) ?? Number.NaN), 0);
  const cpuDaemon0 = daemonsCpu();
  const cpuSim0 = readProcCpuSeconds(sim.proc.pid) ?? Number.NaN;
  const from = Date.now();
  const fromPerf = performance.now();
  const rssSamples: number[] = [];
  let last = { at: fromPerf, stats: before, cpu: cpuDaemon0 };
  // The daemon's own count of each campaign's live calls, every ~2 s (one daemon): set
  // against the service's count at the same instants, the difference is what the daemon
  // holds a slot for that the service does not (an end not yet learned, a call not yet placed).
  const daemonLive: { at: number; live: Map<string, number> }[] = [];
  let sampling = INSTANCES === 1;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      daemonLive.push({ at, live: await metricBy(httpUrl, 'campaignd_live_calls', 'campaign') });
      await sleep(2000);
    }
  })();
  while (performance.now() - fromPerf < SECONDS * 1000) {
    await sleep(Math.min(PROGRESS_MS, fromPerf + SECONDS * 1000 - performance.now()));
    const now = performance.now();
    const stats = await userRequests(sim.url);
    const cpu = daemonsCpu();
    const rss = Math.max(...daemons.map((d) => readProcMemory(d.pid)?.rss ?? Number.NaN));
    rssSamples.push(rss);
    const d = [...requestsBetween(last.stats, stats).values()];
    const sent = d.reduce((n, u) => n + u.requests, 0);
    const refused = d.reduce((n, u) => n + u.refused, 0);
    console.log(
      `    t ${String(Math.round((now - fromPerf) / 1000)).padStart(3)} s  ${fmt(sent / ((now - last.at) / 1000), 1).padStart(6)} requests/s  429s ${refused}  daemon CPU ${fmt((cpu - last.cpu) / ((now - last.at) / 1000), 2)}  RSS ${fmt(mb(rss), 0)} MB  load ${loadAverage()}`,
    );
    last = { at: now, stats, cpu };
  }
  sampling = false;
  await sampler;
  const after = last.stats;
  const to = Date.now();
  const seconds = (performance.now() - fromPerf) / 1000;
  const daemonCpu = (daemonsCpu() - cpuDaemon0) / seconds;
  const simCpu = ((readProcCpuSeconds(sim.proc.pid) ?? Number.NaN) - cpuSim0) / seconds;
  const peakRss = mb(Math.max(...daemons.map((d) => readProcMemory(d.pid)?.hwm ?? Number.NaN)));
  const spread = INSTANCES > 1 ? await accountSpread() : null;
  const daemonRateLimited = (await Promise.all(httpPorts.map((port) => metricSum(`http://127.0.0.1:${port}`, 'campaignd_account_rate_limited_total')))).reduce((a, b) => a + b, 0);
  // How much of the resident memory is the JS heap (the rest: code, buffers, SQLite's cache).
  const heapUsed = mb(await metricSum(httpUrl, 'campaignd_nodejs_heap_size_used_bytes'));
  const heapTotal = mb(await metricSum(httpUrl, 'campaignd_nodejs_heap_size_total_bytes'));
  const whole = requestsBetween([], after);

  // Per account, from the service's record.
  const measured = requestsBetween(before, after);
  const calls = await serviceCalls(sim.url);
  const byAccount = new Map<number, typeof calls>();
  for (const c of calls) {
    const i = accountOfNumber(c.phone_number);
    const list = byAccount.get(i);
    if (list) list.push(c);
    else byAccount.set(i, [c]);
  }
  const perMinute: number[] = [];
  const utilization: number[] = [];
  const gaps: number[][] = [];
  let ranOut = 0;
  for (let i = 0; i < ACCOUNTS; i++) {
    perMinute.push(((measured.get(i)?.requests ?? 0) / seconds) * 60);
    const mine = byAccount.get(i) ?? [];
    // Due leads until the last one was dialed: the window ends there for an account that ran out.
    const lastPlaced = mine.length >= LEADS ? Math.max(...mine.map((c) => c.placed_at_ms)) : to;
    if (lastPlaced < to) ranOut++;
    utilization.push(slotUtilization(mine, SLOTS, from, Math.min(to, lastPlaced)));
    gaps.push(refillGaps(mine, SLOTS, from, Math.min(to, lastPlaced)));
  }
  const totalRequests = perMinute.reduce((a, b) => a + b, 0) / 60;
  const inWindow = calls.filter((c) => c.placed_at_ms >= from && c.placed_at_ms < to).length;
  const lengths = calls.filter((c) => c.ended_at_ms !== null).map((c) => (c.ended_at_ms! - c.placed_at_ms) / 1000);
  const refusedWhole = [...whole.values()].reduce((n, u) => n + u.refused, 0);
  const tripsWhole = [...whole.values()].reduce((n, u) => n + u.trips, 0);
  const accountsRefused = [...whole.values()].filter((u) => u.refused > 0).length;
  const below = utilization.filter((u) => !(u >= UTILIZATION_GOAL)).length;

  if (heapDir) {
    // The snapshot is written by the daemon's main thread; its file stops growing when done.
    const existing = new Set(fs.readdirSync(heapDir));
    process.kill(daemon.pid, 'SIGUSR2');
    let file: string | undefined;
    let size = -1;
    for (;;) {
      await sleep(1000);
      file ??= fs.readdirSync(heapDir).find((f) => f.endsWith('.heapsnapshot') && !existing.has(f));
      if (!file) continue;
      const now = fs.statSync(path.join(heapDir, file)).size;
      if (now > 0 && now === size) break;
      size = now;
    }
    console.log(`  heap snapshot: ${path.join(heapDir, file)} (${fmt(mb(size), 0)} MB)`);
  }
  const takeovers = KILLS > 0 ? await killAndRestart(startInstance, sim.url) : [];
  for (const d of daemons) d.stop();
  const stopFrom = performance.now();
  const codes = await Promise.race([Promise.all(daemons.map((d) => d.exited)), sleep(60_000).then(() => 'timeout' as const)]);
  // Reported, not thrown: the figures of the run are worth having even when the stop is not clean.
  if (codes === 'timeout' || codes.some((c) => c !== 0)) console.log(`  NOT A CLEAN STOP: the daemons exited ${JSON.stringify(codes)} on SIGTERM after ${fmt((performance.now() - stopFrom) / 1000, 1)} s`);
  else console.log(`  every daemon stopped cleanly on SIGTERM within ${fmt((performance.now() - stopFrom) / 1000, 1)} s`);
  if (codes === 'timeout') for (const d of daemons) d.kill();
  daemons.splice(0);
  if (dialect === 'sqlite') {
    // Where an account's slot time goes between the daemon and the service, call by call
    // (one lead and one call per number): claimed → placed at the service (the claim's
    // commit, the request budget, make_call's trip), placed → its answer recorded, ended at
    // the service → the daemon's record of the end (the webhook's trip and its commit). The
    // first and last are slot time the daemon counts as live and the service does not.
    const handle = await target.open({ readonly: true });
    const rows = await handle.db.selectFrom('attempts').select(['phone_number', 'created_at', 'answered_at', 'ended_at']).execute();
    await handle.close();
    const byPhone = new Map(calls.map((c) => [c.phone_number, c]));
    const split = (ids: number[]): string => {
      const want = new Set(ids);
      const parts = { toPlaced: [] as number[], answer: [] as number[], end: [] as number[] };
      for (const r of rows) {
        const c = byPhone.get(r.phone_number);
        if (!c || !want.has(accountOfNumber(r.phone_number)) || c.placed_at_ms < from || c.placed_at_ms >= to) continue;
        parts.toPlaced.push(c.placed_at_ms - Number(r.created_at));
        if (r.answered_at !== null) parts.answer.push(Number(r.answered_at) - c.placed_at_ms);
        if (r.ended_at !== null && c.ended_at_ms !== null) parts.end.push(Number(r.ended_at) - c.ended_at_ms);
      }
      const d = (l: number[]): string => `mean ${fmt(l.reduce((a, b) => a + b, 0) / Math.max(1, l.length), 0)} / p50 ${fmt(percentile(l, 0.5), 0)} / p99 ${fmt(percentile(l, 0.99), 0)} ms`;
      return `claimed → placed ${d(parts.toPlaced)}; placed → answer recorded ${d(parts.answer)}; ended → the daemon knew ${d(parts.end)}`;
    };
    // The post-call webhooks of the window's calls, as the simulator sent them: answered, how fast, or failed and why.
    const deliveries = ((await (await fetch(`${sim.url}/__sim/webhooks`)).json()) as { deliveries: { at: number; answeredAt: number | null; status: number | null; error: string | null }[] }).deliveries.filter((w) => w.at >= from && w.at < to);
    const failed = new Map<string, number>();
    for (const w of deliveries) if (w.status !== 200) failed.set(w.error ?? `HTTP ${String(w.status)}`, (failed.get(w.error ?? `HTTP ${String(w.status)}`) ?? 0) + 1);
    const trips = deliveries.filter((w) => w.answeredAt !== null).map((w) => w.answeredAt! - w.at);
    console.log(`  post-call webhooks sent in the window: ${deliveries.length}, round trip p50 ${fmt(percentile(trips, 0.5), 0)} / p99 ${fmt(percentile(trips, 0.99), 0)} / max ${fmt(Math.max(...trips), 0)} ms; not answered 200: ${failed.size === 0 ? 'none' : [...failed].map(([k, n]) => `${n} ${k}`).join(', ')}`);
    const timedOut = deliveries.filter((w) => w.error === 'timeout');
    if (timedOut.length > 0) {
      // When they were sent, by second of the window: spread out, or one stall.
      const bySecond = new Map<number, number>();
      for (const w of timedOut) bySecond.set(Math.floor((w.at - from) / 1000), (bySecond.get(Math.floor((w.at - from) / 1000)) ?? 0) + 1);
      console.log(`    timed out, by second of the window they were sent in: ${[...bySecond].sort((a, b) => a[0] - b[0]).map(([sec, n]) => `${sec}s:${n}`).join(' ')}`);
    }
    const order = perMinute.map((r, i) => ({ r, i })).sort((a, b) => a.r - b.r);
    console.log(`  per call, the daemon's slot time the service does not see (calls placed in the window):`);
    console.log(`    the 10 slowest accounts: ${split(order.slice(0, 10).map((o) => o.i))}`);
    console.log(`    the 10 fastest accounts: ${split(order.slice(-10).map((o) => o.i))}`);
  }
  if (statements) {
    const placed = calls.length;
    const stats = JSON.parse(fs.readFileSync(statementsFile, 'utf8')) as StatementStat[];
    const totalMs = stats.reduce((n, st) => n + st.ms, 0);
    console.log(`  SQL over the daemon's life: ${stats.reduce((n, st) => n + st.count, 0)} statements, ${fmt(totalMs / 1000, 1)} s in SQLite/PostgreSQL; per call placed (${placed}), most time first:`);
    for (const st of stats.slice(0, 25)) console.log(`    ${fmt(st.ms / placed, 3).padStart(7)} ms  ${fmt(st.count / placed, 2).padStart(6)}×  ${st.sql.slice(0, 160)}`);
  }

  console.log(`  ${inWindow} calls placed in the ${fmt(seconds, 0)} s window (${fmt(inWindow / seconds, 1)}/s, ${fmt(totalRequests / Math.max(1, inWindow / seconds), 2)} requests per call), each live ${fmt(lengths.reduce((a, b) => a + b, 0) / lengths.length, 1)} s on average; ${ranOut} accounts ran out of leads`);
  console.log(`  requests/min per account: min ${fmt(Math.min(...perMinute), 1)}, median ${fmt(percentile(perMinute, 0.5), 1)}, max ${fmt(Math.max(...perMinute), 1)}`);
  {
    // Where the slowest accounts lose their calls: how long their full slots stayed short of one after a call ended.
    const describe = (list: number[]): string => (list.length === 0 ? 'none' : `${list.length} refills, p50 ${fmt(percentile(list, 0.5), 0)} ms, p90 ${fmt(percentile(list, 0.9), 0)} ms, p99 ${fmt(percentile(list, 0.99), 0)} ms, sum ${fmt(list.reduce((a, b) => a + b, 0) / 1000, 1)} s`);
    const order = perMinute.map((r, i) => ({ r, i })).sort((a, b) => a.r - b.r);
    console.log(`  a full account's slot after a call ended, until its next call (service record): all accounts ${describe(gaps.flat())}`);
    /** Mean live calls of account i at the sampled instants: the daemon's count, and the service's. */
    const liveViews = (i: number): string => {
      if (daemonLive.length === 0) return '';
      const mine = byAccount.get(i) ?? [];
      const service = daemonLive.map((d) => mine.filter((c) => c.placed_at_ms <= d.at && (c.ended_at_ms === null || c.ended_at_ms > d.at)).length);
      const own = daemonLive.map((d) => d.live.get(accountName(i)) ?? 0);
      const mean = (l: number[]): number => l.reduce((a, b) => a + b, 0) / l.length;
      return `; live calls, mean of ${daemonLive.length} samples: the daemon's ${fmt(mean(own), 1)}, the service's ${fmt(mean(service), 1)}`;
    };
    // By account number, in quarters: a pattern here is an order the daemon serves accounts in.
    const quarters = [0, 1, 2, 3].map((q) => {
      const ids = Array.from({ length: ACCOUNTS }, (_, i) => i).filter((i) => Math.floor((i * 4) / ACCOUNTS) === q);
      const firstCall = ids.map((i) => Math.min(...(byAccount.get(i) ?? []).map((c) => c.placed_at_ms)));
      const earliest = Math.min(...calls.map((c) => c.placed_at_ms));
      return `${fmt(ids.reduce((n, i) => n + perMinute[i]!, 0) / ids.length, 1)}/min (first call +${fmt((percentile(firstCall, 0.5) - earliest) / 1000, 1)} s)`;
    });
    console.log(`  requests/min by account number, in quarters (median first call after the run's first): ${quarters.join(', ')}`);
    for (const { r, i } of [...order.slice(0, 3), ...order.slice(-2)]) console.log(`    account ${i} (${fmt(r, 1)} requests/min, slots ${fmt(utilization[i]!, 3)}): ${describe(gaps[i]!)}${liveViews(i)}`);
  }
  console.log(`  slot utilization per account: min ${fmt(Math.min(...utilization), 3)}, median ${fmt(percentile(utilization, 0.5), 3)}, max ${fmt(Math.max(...utilization), 3)}; ${below} of ${ACCOUNTS} below ${UTILIZATION_GOAL}`);
  if (proxy) {
    const p = proxy.stats();
    const ms = p.latenciesMs.sort((a, b) => a - b);
    const at = (q: number): string => (ms.length > 0 ? `${Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!)} ms` : 'n/a');
    console.log(`  webhooks through the balancer: ${ms.length} answered (${Object.values(p.forwarded).join(' / ')}), p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1 - 1e-9)}; ${p.retried} sent on to another instance after a failure, ${p.failed} answered by none`);
  }
  console.log(`  429s over the whole run (warm-up included): ${refusedWhole} in ${accountsRefused} accounts (${tripsWhole} limiter trips); the daemon counted ${daemonRateLimited}`);
  console.log(`  CPU in the window: daemon ${fmt(daemonCpu, 2)} cores, simulator ${fmt(simCpu, 2)} cores; load average ${loadAverage()}`);

  const scale = `${ACCOUNTS} accounts, ${fmt(seconds, 0)} s after ${WARMUP_SECONDS} s warm-up, ${dialectLabel(dialect)}, load ${loadAverage()}`;
  const fullRate = (ACCOUNTS * PER_MINUTE) / 60;
  reportFigure(BENCH, 'requests/s to the service, all accounts', totalRequests, 'requests/s', atLeast(Math.floor(0.95 * fullRate), 'requests/s'), `the simulator's per-token counts; ${scale}`);
  reportFigure(BENCH, 'requests/min of the slowest account', Math.min(...perMinute), 'requests/min', atLeast(0.9 * PER_MINUTE, 'requests/min'), `median ${fmt(percentile(perMinute, 0.5), 1)}, max ${fmt(Math.max(...perMinute), 1)}; limit ${PER_MINUTE}`);
  reportFigure(BENCH, '429s (limiter refusals), all accounts', refusedWhole, '', atMost(0, ''), `whole run, warm-up included; ${tripsWhole} trips`);
  reportFigure(BENCH, 'slot utilization of the least used account', Math.min(...utilization), '', atLeast(UTILIZATION_GOAL, ''), `live calls (service record) ÷ ${SLOTS} slots; median ${fmt(percentile(utilization, 0.5), 3)}`);
  if (spread) {
    console.log(`  accounts held per instance at the end of the window: ${spread.join(', ')}`);
    reportFigure(BENCH, 'accounts held by the busiest instance', Math.max(...spread), 'accounts', atMost(Math.ceil(ACCOUNTS / INSTANCES) + 1, 'accounts'), `${INSTANCES} instances hold ${spread.join(' / ')}`);
  }
  if (takeovers.length > 0) {
    reportFigure(BENCH, "longest wait of a killed instance's account for its next call", Math.max(...takeovers) / 1000, 's', atMost(LEASE_SECONDS + 5, 's'), `worst of ${KILLS} SIGKILLs (each restarted at once): ${takeovers.map((t) => fmt(t / 1000, 1)).join(', ')} s; ha.lease_seconds ${LEASE_SECONDS}`);
  }
  reportFigure(BENCH, 'daemon CPU', daemonCpu, 'cores', undefined, `(user + sys) ÷ wall over the window; simulator ${fmt(simCpu, 2)} cores`);
  reportFigure(BENCH, 'daemon RSS peak', peakRss, 'MB', atMost(400, 'MB'), `VmHWM, start-up and import included; median in the window ${fmt(mb(percentile(rssSamples, 0.5)), 0)} MB; JS heap at the end ${fmt(heapUsed, 0)} used / ${fmt(heapTotal, 0)} MB`);
} finally {
  await cleanUp();
}

/** Accounts held per instance (account_leases, live leases), in the order of `daemons`. */
async function accountSpread(): Promise<number[]> {
  const store = await target.open();
  try {
    const holdings = await accountHoldings(store.db);
    return daemons.map((d) => holdings.filter((h) => h.pid === d.pid).length);
  } finally {
    await store.close();
  }
}

/**
 * KILLS times: SIGKILL of a random instance, restarted at once; after KILL_GAP_SECONDS, the
 * longest any account it held waited for its next call (simulator's record), in ms. A call
 * the killed process had sent may still be created just after the kill: not a takeover.
 */
async function killAndRestart(startInstance: (i: number) => DaemonProcess, simUrl: string): Promise<number[]> {
  const random = mulberry32(25);
  const worst: number[] = [];
  const store = await target.open();
  try {
    for (let k = 0; k < KILLS; k++) {
      const i = Math.floor(random() * INSTANCES);
      const victim = daemons[i]!;
      const held = (await accountHoldings(store.db)).filter((h) => h.pid === victim.pid).map((h) => Number(h.account.slice('acct-'.length)));
      const killedAt = Date.now();
      victim.kill();
      await victim.exited;
      startInstance(i);
      await sleep(KILL_GAP_SECONDS * 1000);
      const calls = await serviceCalls(simUrl);
      let longest = 0;
      for (const account of held) {
        const next = calls.filter((c) => accountOfNumber(c.phone_number) === account && c.placed_at_ms > killedAt + IN_FLIGHT_GRACE_MS).reduce((m, c) => Math.min(m, c.placed_at_ms), Number.POSITIVE_INFINITY);
        longest = Math.max(longest, next - killedAt);
      }
      worst.push(longest);
      console.log(`    kill ${k + 1}: instance ${i} (pid ${victim.pid}, ${held.length} accounts) → its accounts' next calls within ${fmt(longest / 1000, 1)} s; load ${loadAverage()}`);
    }
  } finally {
    await store.close();
  }
  return worst;
}

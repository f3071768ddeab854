// `npx tsx bench/status.ts [LEADS]` (after `npm run build`; `npm run bench` builds): how
// long `campaignd status` takes as a user meets it, and how long collecting its report takes.
//  - The command: the package's bin (bin/campaignd.js, executed itself so that its #! line
//    applies, running the compiled build), whole process from spawn to exit, on a small
//    store (SMALL leads) and on one of LEADS leads (default 1,000,000) over 5 campaigns with
//    about 0.6 attempts per lead. Median and worst of RUNS after a first run. Goals
//    (issue 11): median ≤ 200 ms small, ≤ 400 ms at 1M leads.
//  - In-process: collectStatus over the big store, goal ≤ 300 ms per report.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/store/database.js';
import { openForBulkLoad } from './lib/big-store.js';
import { collectStatus } from '../src/status/collect.js';
import { renderStatus } from '../src/status/render.js';
import { buildIfStale } from '../test/helpers/build.js';
import { BIN, cleanEnv } from '../test/helpers/processes.js';
import { atMost, reportFigure } from './lib/figures.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'status';
const LEADS = Number(process.argv[2] ?? 1_000_000);
const SMALL = 1_000;
const RUNS = 11;
const CAMPAIGNS = 5;
const NOW = Date.UTC(2026, 10, 23, 10, 0, 0); // Monday 11:00 Berlin: windows open
const STATES = ['pending', 'pending', 'pending', 'retry-scheduled', 'completed', 'completed', 'reached-max-retries', 'invalid', 'suppressed', 'calling'] as const;

// BENCH_KEEP=1 keeps the built file; BENCH_DB=FILE measures a file built earlier.
const reuse = process.env.BENCH_DB;
const dir = reuse ? path.dirname(reuse) : fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-status-'));
const file = reuse ?? path.join(dir, 'campaignd.db');
const smallFile = path.join(dir, 'small.db');
try {
  // The bin runs dist/: measure the sources as they are.
  await buildIfStale();
  await build(smallFile, SMALL);
  commandFigure(smallFile, SMALL, 200);
  if (!reuse) await build(file, LEADS);
  commandFigure(file, LEADS, 400);
  await measure();
} finally {
  fs.rmSync(smallFile, { force: true });
  if (process.env.BENCH_KEEP || reuse) console.log(`kept ${file}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * `campaignd status` as a user types it (the plain report, and --json once to check it
 * read the whole store): the bin executed in a new process, a config naming `db`.
 */
function commandFigure(db: string, leads: number, goalMs: number): void {
  const config = path.join(dir, `campaignd-${leads}.yaml`);
  fs.writeFileSync(config, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${JSON.stringify(db)}\ncampaigns_dir: ./campaigns\n`);
  const cpu: number[] = [];
  const run = (args: string[]): { ms: number; stdout: string } => {
    const c0 = childrenCpuMs();
    const t0 = performance.now();
    const r = spawnSync(BIN, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: cleanEnv({ CAMPAIGND_CONFIG: config }) });
    const ms = performance.now() - t0;
    if (args[0] === 'status') cpu.push(childrenCpuMs() - c0);
    // Exit 1 is a report with problems (campaigns with a stuck call, …), still a report.
    if (r.status !== 0 && r.status !== 1) throw new Error(`campaignd ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`);
    return { ms, stdout: r.stdout };
  };
  const json = JSON.parse(run(['status', '--json']).stdout) as { campaigns: { leads: { total: number } }[] };
  const total = json.campaigns.reduce((n, c) => n + c.leads.total, 0);
  if (total !== leads) throw new Error(`campaignd status counted ${total} leads, expected ${leads}`);
  cpu.length = 0;
  const times = Array.from({ length: RUNS }, () => run(['status']).ms);
  const version = summary(Array.from({ length: 5 }, () => run(['--version']).ms));
  const s = summary(times);
  const scale = `${leads.toLocaleString('en')} leads`;
  console.log(`campaignd status, ${scale}: median ${fmt(s.p50, 0)} ms, worst ${fmt(s.max, 0)} ms of ${RUNS}; campaignd --version median ${fmt(version.p50, 0)} ms`);
  reportFigure(BENCH, `campaignd status, whole command, ${scale} (median)`, s.p50, 'ms', atMost(goalMs, 'ms'), `the bin executed, spawn to exit, ${RUNS} runs after a first; --version alone ${fmt(version.p50, 0)} ms`);
  reportFigure(BENCH, `campaignd status, whole command, ${scale} (worst)`, s.max, 'ms', undefined, `worst of the same ${RUNS} runs; load average ${os.loadavg()[0]?.toFixed(1)}`);
  reportFigure(BENCH, `campaignd status, CPU time, ${scale} (median)`, summary(cpu).p50, 'ms', undefined, 'user + system of the command itself (10 ms ticks): what it costs on an idle core');
}

/** CPU time (user + system, ms) of this process's waited-for children so far: cutime and cstime of /proc/self/stat. */
function childrenCpuMs(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5), counted from the state (field 3) at index 0.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

async function build(file: string, LEADS: number): Promise<void> {
  const raw = await openForBulkLoad(file, NOW);
  const t0 = performance.now();
  const insertCampaign = raw.prepare(
    `insert into campaigns (name, state, assistant_id, timezone, max_calls_in_parallel, config_json, created_at, updated_at)
     values (?, 'running', 12, 'Europe/Berlin', 50, ?, 0, 0)`,
  );
  const insertLead = raw.prepare(
    `insert into leads (campaign_id, dedupe_key, phone_number, state, next_due_at, created_at, updated_at) values (?, ?, ?, ?, ?, 0, ?)`,
  );
  const insertAttempt = raw.prepare(
    `insert into attempts (campaign_id, lead_id, contact_position, phone_number, assistant_id, state, created_at, sent_at) values (?, ?, 0, ?, 12, ?, ?, ?)`,
  );
  const config = (name: string): string =>
    JSON.stringify({ name, assistantId: 12, timezone: 'Europe/Berlin', allowedDays: [1, 2, 3, 4, 5], allowedHoursStart: 32_400, allowedHoursEnd: 64_800, blackoutDates: [], maxCallsInParallel: 50 });
  raw.transaction(() => {
    for (let c = 1; c <= CAMPAIGNS; c++) insertCampaign.run(`campaign-${c}`, config(`campaign-${c}`));
  })();
  let attempts = 0;
  let live = 0;
  const batch = raw.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const campaign = (i % CAMPAIGNS) + 1;
      const state = STATES[Math.floor(i / CAMPAIGNS) % STATES.length]!;
      const phone = `+1555${String(i).padStart(7, '0')}`;
      const final = state === 'completed' || state === 'reached-max-retries';
      const updated = final ? NOW - ((i * 7919) % (48 * 3_600_000)) : 0;
      const lead = insertLead.run(campaign, phone, phone, state, final ? null : NOW, updated).lastInsertRowid as number;
      if (state === 'pending' || state === 'invalid' || state === 'suppressed') continue;
      // a lead that was called: one or two attempts spread over two days
      const created = NOW - ((i * 104_729) % (48 * 3_600_000));
      if (state === 'reached-max-retries') {
        insertAttempt.run(campaign, lead, phone, 'ended', created - 3_600_000, created - 3_600_000);
        attempts++;
      }
      const attemptState = state === 'calling' && live < 250 ? 'placed' : 'ended';
      if (attemptState === 'placed') live++;
      insertAttempt.run(campaign, lead, phone, attemptState, created, created);
      attempts++;
    }
  });
  for (let from = 0; from < LEADS; from += 50_000) batch(from, Math.min(LEADS, from + 50_000));
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.exec('analyze');
  raw.close();
  console.log(`built ${LEADS.toLocaleString('en')} leads, ${attempts.toLocaleString('en')} attempts, ${live} live, in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function measure(): Promise<void> {

  const handle = openDatabase(file, { readonly: true });
  const opts = { now: NOW, version: 'bench', isPidAlive: () => false };
  const first = performance.now();
  const report = await collectStatus(handle.db, opts);
  console.log(`first report (cold): ${(performance.now() - first).toFixed(0)} ms`);
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    await collectStatus(handle.db, opts);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const pct = (p: number): string => (times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(0);
  console.log(`collectStatus, all ${CAMPAIGNS} campaigns: median ${pct(0.5)} ms, p90 ${pct(0.9)} ms, max ${pct(1)} ms (target ≤ 300 ms)`);
  const one: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    await collectStatus(handle.db, { ...opts, campaign: 'campaign-3' });
    one.push(performance.now() - t);
  }
  one.sort((a, b) => a - b);
  console.log(`collectStatus, one campaign: median ${(one[7] ?? 0).toFixed(0)} ms`);
  const t = performance.now();
  renderStatus(report, { now: NOW, color: false });
  console.log(`render: ${(performance.now() - t).toFixed(1)} ms`);
  const total = report.campaigns.reduce((n, c) => n + c.leads.total, 0);
  if (!reuse && total !== LEADS) throw new Error(`report counts ${total} leads, expected ${LEADS}`);
  await handle.close();
}

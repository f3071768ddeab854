// `npx tsx bench/engine-claim.ts [--quick]`: the engine's hot path at scale. Builds
// 1,000,000 leads in 100 campaigns in a SQLite FILE (200,000 with --quick) in a child
// process, so the build's memory is not counted, then in this process, through the
// daemon's own openDatabase:
//  - claim latency: dueLeads(db, campaign, now, 10) + claimAttempt, 2,000 times spread
//    over the campaigns (goal p99 ≤ 5 ms); each claim commits with synchronous=FULL, as the
//    daemon's must before make_call (issue 11: the intent row survives a power cut);
//  - what FULL costs: the same one-row commit 300 times with synchronous=FULL
//    (durableTransaction) and 300 times with NORMAL, interleaved, on the same file;
//  - status: collectStatus over the whole database (goal ≤ 300 ms), and the command an
//    operator types, `campaignd status --json`, timed end to end in a new process;
//  - resident memory of THIS process (node + tsx + the bench) while doing both: reported
//    only. The ≤ 200 MB goal is the daemon's, for a benchmark of a real daemon process;
//    this figure carries the TypeScript loader and the bench's own arrays.
// `--dialect postgres` runs the same on a PostgreSQL database (bench/lib/bench-db.ts): the
// store built by bulk SQL in the server (big-store-postgres.ts), each claim made under a
// lease's fencing token as the active instance's are (the trigger checks it), goal p99
// ≤ 10 ms (issue 12); the FULL/NORMAL comparison is SQLite's alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { claimAttempts } from '../src/store/attempts.js';
import { dueLeads } from '../src/store/due-leads.js';
import { collectStatus } from '../src/status/collect.js';
import { durableTransaction } from '../src/store/durable.js';
import { takeLease } from '../src/store/lease.js';
import { buildIfStale } from '../test/helpers/build.js';
import { benchDialect, benchTarget, dialectLabel } from './lib/bench-db.js';
import { buildBigStore } from './lib/big-store.js';
import { buildBigStorePostgres } from './lib/big-store-postgres.js';
import { atMost, isQuick, reportFigure } from './lib/figures.js';
import { sampleRss } from './lib/rss.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'engine-claim';
const dialect = benchDialect();
// The clock's time (to the second), handed to the build child: `campaignd status` reads
// the real clock, and sees the same recent attempts and finished leads as collectStatus.
// Campaigns call every day, all day, so nothing else depends on the date.
const nowIndex = process.argv.indexOf('--now');
const NOW = nowIndex >= 0 ? Number(process.argv[nowIndex + 1]) : Math.floor(Date.now() / 1000) * 1000;
const CAMPAIGNS = 100;
const quick = isQuick();
const LEADS = quick ? 200_000 : 1_000_000;
const CLAIMS = 2_000;

const buildIndex = process.argv.indexOf('--build');
if (buildIndex >= 0) {
  // Child mode: build the file and exit.
  const file = process.argv[buildIndex + 1] as string;
  const t0 = performance.now();
  const s = await buildBigStore(file, LEADS, CAMPAIGNS, NOW);
  console.log(`  built ${s.leads.toLocaleString('en')} leads, ${s.attempts.toLocaleString('en')} attempts, ${s.campaigns} campaigns in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  process.exit(0);
}

// `campaignd status` below runs the bin, which runs the build: measure the sources as they are.
await buildIfStale();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-claim-'));
const target = await benchTarget(dialect, path.join(dir, 'campaignd.db'));
const file = target.database;
try {
  console.log(`${BENCH}: ${LEADS.toLocaleString('en')} leads in ${CAMPAIGNS} campaigns, ${dialect === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'}${quick ? ' (quick)' : ''}`);
  if (dialect === 'sqlite') {
    const self = fileURLToPath(import.meta.url);
    const child = spawnSync(process.execPath, [...process.execArgv, self, '--build', file, '--now', String(NOW), ...(quick ? ['--quick'] : [])], { stdio: 'inherit' });
    if (child.status !== 0) throw new Error(`building the database failed (exit ${child.status})`);
    console.log(`  database file ${fmt(fs.statSync(file).size / 1e6, 0)} MB`);
  } else {
    // The server does the work: this process only sends a few statements.
    const t0 = performance.now();
    const s = await buildBigStorePostgres(target, LEADS, CAMPAIGNS, NOW);
    console.log(`  built ${s.leads.toLocaleString('en')} leads, ${s.attempts.toLocaleString('en')} attempts, ${s.campaigns} campaigns in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  }

  // Under tsx the process holds the TypeScript loader too; this is the floor before any query.
  const floor = process.memoryUsage.rss() / 1e6;
  const rss = sampleRss(10);
  const store = await target.open();
  const { db } = store;
  // On PostgreSQL the daemon claims only while it holds the lease, under its token.
  const fenceToken = dialect === 'postgres' ? ((await takeLease(db, 'bench', 3_600_000)) ?? undefined) : undefined;
  const claimMs: number[] = [];
  const queryMs: number[] = [];
  let claimed = 0;
  // A daemon that runs for months has each campaign's index pages cached; the first
  // look at a campaign after opening reads them from disk. That cold look is reported
  // on its own, and the claim figures are the steady state.
  const coldMs: number[] = [];
  for (let campaignId = 1; campaignId <= CAMPAIGNS; campaignId++) {
    const t0 = performance.now();
    await dueLeads(db, campaignId, NOW, 10);
    coldMs.push(performance.now() - t0);
  }
  const firstLook = summary(coldMs);
  console.log(`  first look at each campaign after opening (cold cache): p50 ${fmt(firstLook.p50, 3)} ms, p99 ${fmt(firstLook.p99, 3)} ms`);
  reportFigure(BENCH, 'first dueLeads per campaign, cold cache, p99', firstLook.p99, 'ms', undefined, `${CAMPAIGNS} campaigns, right after opening`);
  for (let i = 0; i < CLAIMS; i++) {
    // Campaigns in a scattered order, as the scheduler would visit them after webhooks.
    const campaignId = ((i * 37) % CAMPAIGNS) + 1;
    const now = NOW + i;
    const t0 = performance.now();
    const due = await dueLeads(db, campaignId, now, 10);
    const t1 = performance.now();
    const lead = due[0];
    if (lead) {
      const [result] = await claimAttempts(
        db,
        [{ campaignId, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: lead.contact_phone ?? lead.phone_number, assistantId: 1, owner: 'bench', now }],
        { fenceToken },
      );
      if (result?.ok) claimed++;
    }
    claimMs.push(performance.now() - t0);
    queryMs.push(t1 - t0);
  }
  if (claimed !== CLAIMS) throw new Error(`only ${claimed} of ${CLAIMS} claims succeeded`);
  const q = summary(queryMs);
  const c = summary(claimMs);
  console.log(`  dueLeads alone: p50 ${fmt(q.p50, 3)} ms, p99 ${fmt(q.p99, 3)} ms; dueLeads + claimAttempt: p50 ${fmt(c.p50, 3)} ms, p99 ${fmt(c.p99, 3)} ms, max ${fmt(c.max, 2)} ms`);
  reportFigure(BENCH, 'claim (dueLeads + claimAttempt) p50', c.p50, 'ms', undefined, `${CLAIMS} claims, ${LEADS.toLocaleString('en')} leads`);
  reportFigure(
    BENCH,
    'claim (dueLeads + claimAttempt) p99',
    c.p99,
    'ms',
    atMost(dialect === 'postgres' ? 10 : 5, 'ms'),
    `${CLAIMS} claims, ${LEADS.toLocaleString('en')} leads, ${dialect === 'postgres' ? 'PostgreSQL, each under the lease\'s fencing token' : 'each committed with synchronous=FULL'}`,
  );

  // What synchronous=FULL adds to a commit: the same one-row write, alternately durable
  // (the WAL fsynced before COMMIT returns) and NORMAL (written, synced at checkpoints).
  const fullMs: number[] = [];
  const normalMs: number[] = [];
  // PostgreSQL flushes every commit (synchronous_commit on): nothing to compare there.
  for (let i = 0; i < (dialect === 'sqlite' ? 600 : 0); i++) {
    const durable = i % 2 === 0;
    const write = async (trx: typeof db): Promise<void> => {
      await trx.updateTable('campaigns').set({ updated_at: NOW + i }).where('id', '=', (i % CAMPAIGNS) + 1).execute();
    };
    const t0 = performance.now();
    if (durable) await durableTransaction(db, write);
    else await db.transaction().execute(write);
    (durable ? fullMs : normalMs).push(performance.now() - t0);
  }
  if (dialect === 'sqlite') {
    const full = summary(fullMs);
    const normal = summary(normalMs);
    console.log(`  one-row commit: synchronous=FULL p50 ${fmt(full.p50, 3)} ms, p99 ${fmt(full.p99, 3)} ms; NORMAL p50 ${fmt(normal.p50, 3)} ms, p99 ${fmt(normal.p99, 3)} ms`);
    reportFigure(BENCH, 'one-row commit, synchronous=FULL, p99', full.p99, 'ms', undefined, `p50 ${fmt(full.p50, 3)} ms; 300 commits, the claim's setting`);
    reportFigure(BENCH, 'one-row commit, synchronous=NORMAL, p99', normal.p99, 'ms', undefined, `p50 ${fmt(normal.p50, 3)} ms; 300 commits interleaved with the above, every other write's setting`);
  }

  // The daemon folds the WAL into the database file every 10 s (src/app.ts); status
  // is measured as it reads in a running daemon, after that.
  await store.checkpoint();
  const statusMs: number[] = [];
  let total = 0;
  for (let i = 0; i < 6; i++) {
    const t0 = performance.now();
    const report = await collectStatus(db, { now: NOW + CLAIMS, version: 'bench', isPidAlive: () => false });
    statusMs.push(performance.now() - t0);
    total = report.campaigns.reduce((n, r) => n + r.leads.total, 0);
  }
  if (total !== LEADS) throw new Error(`status counted ${total} leads, expected ${LEADS}`);
  const [cold, ...warm] = statusMs;
  const s = summary(warm);
  console.log(`  collectStatus over ${CAMPAIGNS} campaigns: first ${fmt(cold ?? Number.NaN, 0)} ms, then p50 ${fmt(s.p50, 0)} ms, max ${fmt(s.max, 0)} ms`);
  reportFigure(BENCH, 'status (collectStatus, whole DB)', s.max, 'ms', atMost(300, 'ms'), `worst of ${warm.length} after a first run of ${fmt(cold ?? Number.NaN, 0)} ms`);
  const peak = rss.peak() / 1e6;
  rss.stop();
  statusCommandFigure(s.max);
  reportFigure(BENCH, 'resident memory above the floor', peak - floor, 'MB', undefined, `what opening, claiming and status added${dialect === 'sqlite' ? ' (SQLite page cache is 8 MiB)' : ' (PostgreSQL caches in its server)'}`);
  reportFigure(
    BENCH,
    'resident memory (claims + status)',
    peak,
    'MB',
    undefined,
    `peak RSS of the bench process under tsx, not the daemon; build excluded; ${fmt(floor, 0)} MB before opening the database (node + tsx + code)`,
  );
  await store.close();
} finally {
  await target.drop();
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * `campaignd status --json` as an operator runs it: a new node process (bin/campaignd.js,
 * the compiled build), a config naming this database, a read-only open,
 * collectStatus at the clock's time, the JSON on stdout. Median of 5 after a first run.
 */
function statusCommandFigure(collectMs: number): void {
  const configDir = path.join(dir, 'config');
  fs.mkdirSync(path.join(configDir, 'campaigns'), { recursive: true });
  const config = path.join(configDir, 'campaignd.yaml');
  fs.writeFileSync(config, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${JSON.stringify(file)}\ncampaigns_dir: ./campaigns\n`);
  const bin = fileURLToPath(new URL('../bin/campaignd.js', import.meta.url));
  const run = (args: string[]): number => {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, ...target.env, CAMPAIGND_CONFIG: config } });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`campaignd ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (args[0] === 'status') {
      const report = JSON.parse(r.stdout) as { campaigns: { leads: { total: number } }[] };
      const total = report.campaigns.reduce((n, c) => n + c.leads.total, 0);
      if (total !== LEADS) throw new Error(`campaignd status counted ${total} leads, expected ${LEADS}`);
    }
    return ms;
  };
  const first = run(['status', '--json']);
  const times = Array.from({ length: 5 }, () => run(['status', '--json']));
  const start = summary(Array.from({ length: 3 }, () => run(['--version']))).p50;
  const cmd = summary(times);
  console.log(`  campaignd status --json: first ${fmt(first, 0)} ms, then p50 ${fmt(cmd.p50, 0)} ms, max ${fmt(cmd.max, 0)} ms; campaignd --version alone ${fmt(start, 0)} ms`);
  reportFigure(
    BENCH,
    'campaignd status --json, whole command',
    cmd.p50,
    'ms',
    undefined,
    `median of 5, process start included (campaignd --version alone: ${fmt(start, 0)} ms; collectStatus in-process: ${fmt(collectMs, 0)} ms); ${dialectLabel(dialect)}`,
  );
}

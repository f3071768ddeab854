// Lead import throughput: generates a lead CSV (default 1,000,000 rows) in a temp dir,
// imports it into a fresh SQLite file through the real reader and importer, then
// imports it again (the idempotent path), and prints rows/s. Goal (issue 3): at least
// 50,000 rows/s under 300 MB.
//
// Memory is measured as a user runs an import: `campaignd leads import FILE` as a child
// process into a fresh database, once through the compiled build as the deployments run
// it (bin/campaignd-dist.mjs, with its #! node flags) and once through `npx campaignd`
// (bin/campaignd.js, tsx); peak VmHWM of each. The in-process figure is this benchmark's
// own process (tsx, the timing harness), reported for comparison.
//
//   npx tsx bench/import-leads.ts [rows]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { importLeads, type ImportSummary } from '../src/leads/import.js';
import { readLeadCsv } from '../src/leads/read-leads.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { upsertCampaign } from '../src/store/campaigns.js';
import type { CampaignConfig } from '../src/config/types.js';
import { BIN, spawnNode, stopAllProcesses } from '../test/helpers/processes.js';
import { buildCompiledApp } from './lib/compiled-app.js';
import { atMost, reportFigure } from './lib/figures.js';
import { followProcPeak, sampleRss } from './lib/rss.js';

const BENCH = 'import-leads';
const rows = Number(process.argv[2] ?? 1_000_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-'));
const csv = path.join(dir, 'leads.csv');
const dbFile = path.join(dir, 'bench.db');

/** Writes `n` rows: mostly +1 555 and +49 15 numbers, ~1% invalid, ~1% repeated, some secondaries and zones. */
async function generate(file: string, n: number): Promise<void> {
  const out = fs.createWriteStream(file);
  out.write('phone_number,first_name,last_name,plan,timezone,secondary_phone_number_1\n');
  const zones = ['', '', 'Europe/Berlin', 'America/New_York', ''];
  for (let i = 0; i < n; i++) {
    let phone = i % 2 === 0 ? `+1555${String(1_000_000 + i).slice(-7)}` : `+4915${String(100_000_000 + i)}`;
    if (i % 100 === 7) phone = 'n/a';
    if (i % 100 === 13) phone = i % 2 === 0 ? `+1555${String(1_000_000 + i - 2).slice(-7)}` : `+4915${String(100_000_000 + i - 2)}`;
    const secondary = i % 10 === 3 ? `+4930${String(10_000_000 + i)}` : '';
    const line = `${phone},First${i},"Last, ${i}",${i % 3 === 0 ? 'gold' : 'basic'},${zones[i % zones.length]},${secondary}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

function cfg(): CampaignConfig {
  return {
    name: 'bench', file: path.join(dir, 'bench.yaml'), assistantId: 1, allowedDays: [1, 2, 3, 4, 5, 6, 7],
    allowedHoursStart: 0, allowedHoursEnd: 0, maxCallsInParallel: 5, maxRetries: 2, retryIntervalSeconds: 3600,
    markCompleteWhenNoLeads: true, retryOn: ['busy', 'no-answer', 'failed', 'voicemail'], blackoutDates: [],
    initialStatus: 'running', leads: { file: csv }, allowDuplicates: false,
  };
}

async function timedImport(label: string): Promise<ImportSummary> {
  const handle = openDatabase(dbFile);
  try {
    await migrateToLatest(handle.db);
    const campaign = await upsertCampaign(handle.db, cfg(), { timezone: 'UTC' }, Date.now());
    const started = performance.now();
    const cpu = process.cpuUsage();
    const summary = await importLeads(handle.db, { id: campaign.id, allowDuplicates: false }, readLeadCsv(csv, {}), { now: Date.now(), sourceFile: csv });
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    console.log(`${label.padEnd(10)} ${summary.read.toLocaleString('en')} rows in ${seconds.toFixed(2)} s = ${Math.round(summary.read / seconds).toLocaleString('en')} rows/s`);
    // On a shared machine wall time also counts other processes; rows per CPU-second is
    // what this process would reach on a core of its own.
    console.log(`           CPU ${cpuSeconds.toFixed(2)} s = ${Math.round(summary.read / cpuSeconds).toLocaleString('en')} rows per CPU-second; load average ${os.loadavg()[0]?.toFixed(1)}`);
    console.log(`           accepted ${summary.accepted}, updated ${summary.updated}, unchanged ${summary.unchanged}, duplicates ${summary.duplicates}, invalid ${summary.invalid}`);
    return summary;
  } finally {
    await handle.close();
  }
}

/** A daemon config and a campaign file naming the CSV, for `campaignd leads import`. */
function writeCliConfig(): string {
  fs.mkdirSync(path.join(dir, 'campaigns'));
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${path.join(dir, 'cli.db')}\ncampaigns_dir: ./campaigns\n`);
  // JSON is YAML; the settings of cfg() above.
  const campaign = {
    assistant_id: 1, timezone: 'UTC', allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
    allowed_hours_start_time: '00:00:00', allowed_hours_end_time: '00:00:00', max_calls_in_parallel: 5, max_retries: 2, retry_interval: 3600,
    leads: { file: csv },
  };
  fs.writeFileSync(path.join(dir, 'campaigns', 'bench.yaml'), JSON.stringify(campaign));
  return configPath;
}

/** `campaignd leads import` as a child process into a fresh database: its peak VmHWM in MB and its wall time. */
async function cliImport(label: string, entry: string, env: Record<string, string>, configPath: string, accepted: number): Promise<number> {
  const db = path.join(dir, `cli-${label}.db`);
  const started = performance.now();
  const proc = spawnNode(`leads import (${label})`, entry, ['leads', 'import', csv, '--campaign', 'bench', '--config', configPath, '--json'], { env: { ...env, CAMPAIGND_DATABASE: db } });
  const peak = followProcPeak(proc.pid);
  const exit = await proc.exited;
  peak.stop();
  const seconds = (performance.now() - started) / 1000;
  if (exit.code !== 0) throw new Error(`leads import (${label}) exited ${exit.code}: ${proc.stderr().slice(-2000)}`);
  const summary = JSON.parse(proc.stdout()) as ImportSummary;
  if (summary.accepted !== accepted) throw new Error(`leads import (${label}) accepted ${summary.accepted}, in-process ${accepted}`);
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(db + suffix, { force: true });
  const mb = peak.peak() / 1e6;
  console.log(`${`leads import, ${label}:`.padEnd(23)} ${summary.read.toLocaleString('en')} rows in ${seconds.toFixed(2)} s = ${Math.round(summary.read / seconds).toLocaleString('en')} rows/s, process start included; peak RSS ${mb.toFixed(0)} MB`);
  return mb;
}

try {
  const t0 = performance.now();
  await generate(csv, rows);
  console.log(`generated  ${rows.toLocaleString('en')} rows, ${(fs.statSync(csv).size / 1e6).toFixed(1)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // From here on: the import, not the generation, and not tsx's start-up before it.
  const rss = sampleRss(50);
  const first = await timedImport('import');
  await timedImport('re-import');
  const inProcess = rss.peak() / 1e6;
  rss.stop();
  console.log(`in-process peak RSS ${inProcess.toFixed(0)} MB (this benchmark under tsx: import and re-import); database ${(fs.statSync(dbFile).size / 1e6).toFixed(0)} MB`);

  const compiled = buildCompiledApp(path.join(dir, 'app'));
  const configPath = writeCliConfig();
  const compiledMb = await cliImport('compiled', compiled.entry, compiled.nodeOptions ? { NODE_OPTIONS: compiled.nodeOptions } : {}, configPath, first.accepted);
  const tsxMb = await cliImport('tsx', BIN, {}, configPath, first.accepted);
  const note = `${rows.toLocaleString('en')} rows, \`campaignd leads import\` as a child process, VmHWM`;
  reportFigure(BENCH, 'import peak RSS, compiled (bin/campaignd-dist.mjs)', compiledMb, 'MB', atMost(300, 'MB'), note);
  reportFigure(BENCH, 'import peak RSS, npx campaignd (tsx)', tsxMb, 'MB', atMost(300, 'MB'), note);
  console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}`);
} finally {
  await stopAllProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
}

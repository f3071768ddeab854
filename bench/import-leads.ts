// Lead import throughput: generates a lead CSV (default 1,000,000 rows) in a temp dir,
// imports it into a fresh SQLite file through the real reader and importer, then
// imports it again (the idempotent path), and prints rows/s and peak memory.
// Goal (issue 3): at least 50,000 rows/s under 300 MB.
//
//   npx tsx bench/import-leads.ts [rows]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { importLeads, type ImportSummary } from '../src/leads/import.js';
import { readLeadCsv } from '../src/leads/read-leads.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { upsertCampaign } from '../src/store/campaigns.js';
import type { CampaignConfig } from '../src/config/types.js';

const rows = Number(process.argv[2] ?? 1_000_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-'));
const csv = path.join(dir, 'leads.csv');
const dbFile = path.join(dir, 'bench.db');

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);

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
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
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

try {
  const t0 = performance.now();
  await generate(csv, rows);
  console.log(`generated  ${rows.toLocaleString('en')} rows, ${(fs.statSync(csv).size / 1e6).toFixed(1)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await timedImport('import');
  await timedImport('re-import');
  const maxRssMb = Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1e6;
  console.log(`peak RSS   ${maxRssMb.toFixed(0)} MB; database ${(fs.statSync(dbFile).size / 1e6).toFixed(0)} MB`);
  console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}`);
} finally {
  clearInterval(sampler);
  fs.rmSync(dir, { recursive: true, force: true });
}

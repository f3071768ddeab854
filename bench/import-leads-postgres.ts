// Lead import on PostgreSQL (issue 12: ≥ 50,000 rows/s), as bench/import-leads.ts measures
// it on SQLite: `campaignd leads import FILE --campaign bench` through the package's bin,
// spawn to exit, into a fresh database (bench/lib/bench-db.ts: on `npm run bench`'s server,
// or a throwaway embedded one, the tests' own), then the same file again (the idempotent
// re-import). The URL in the config has no password; the bin gets it from PGPASSWORD.
//
// With --runs N each run starts from empty tables (TRUNCATE); the figures are the median,
// the worst is printed beside it. The command's peak RSS (VmHWM) must stay under 300 MB.
//
//   npm run build && npx tsx bench/import-leads-postgres.ts [rows] [--runs N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { buildIfStale } from '../test/helpers/build.js';
import { BIN, spawnExecutable, stopAllProcesses } from '../test/helpers/processes.js';
import { benchTarget } from './lib/bench-db.js';
import { atLeast, atMost, reportFigure } from './lib/figures.js';
import { followProcPeak } from './lib/rss.js';

const BENCH = 'import-leads-postgres';
const rows = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 1_000_000);
const runsAt = process.argv.indexOf('--runs');
const runs = runsAt >= 0 ? Math.max(1, Number(process.argv[runsAt + 1])) : 1;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-pg-'));
const csv = path.join(dir, 'leads.csv');

/** `n` rows of the SQLite bench's shape: +1 555 and +49 15 numbers, ~1% invalid, ~1% repeated, some secondaries. */
async function generate(file: string, n: number): Promise<void> {
  const out = fs.createWriteStream(file);
  out.write('phone_number,first_name,last_name,plan,timezone,secondary_phone_number_1\n');
  const zones = ['', '', 'Europe/Berlin', 'America/New_York', ''];
  for (let i = 0; i < n; i++) {
    const at = i % 100 === 13 ? i - 2 : i;
    const phone = i % 100 === 7 ? 'n/a' : at % 2 === 0 ? `+1555${String(1_000_000 + at).slice(-7)}` : `+4915${String(100_000_000 + at)}`;
    const secondary = i % 10 === 3 ? `+4930${String(10_000_000 + i)}` : '';
    if (!out.write(`${phone},First${i},"Last, ${i}",${i % 3 === 0 ? 'gold' : 'basic'},${zones[i % zones.length]},${secondary}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<void> {
  await buildIfStale();
  await generate(csv, rows);
  const target = await benchTarget('postgres', 'unused');
  try {
    fs.mkdirSync(path.join(dir, 'campaigns'));
    const configPath = path.join(dir, 'campaignd.yaml');
    fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${target.database}\ncampaigns_dir: ./campaigns\n`);
    const campaign = {
      assistant_id: 1, timezone: 'UTC', allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
      allowed_hours_start_time: '00:00:00', allowed_hours_end_time: '00:00:00', max_calls_in_parallel: 5, max_retries: 2, retry_interval: 3600,
      leads: { file: csv },
    };
    fs.writeFileSync(path.join(dir, 'campaigns', 'bench.yaml'), JSON.stringify(campaign));
    const results = { import: [] as number[], 're-import': [] as number[] };
    let peakMb = 0;
    for (let run = 1; run <= runs; run++) {
      if (run > 1) await emptyTables(target);
      for (const label of ['import', 're-import'] as const) {
        const started = performance.now();
        const proc = spawnExecutable(`leads import (${label})`, BIN, ['leads', 'import', csv, '--campaign', 'bench', '--config', configPath, '--json'], { env: target.env });
        const peak = followProcPeak(proc.pid);
        const exit = await proc.exited;
        const seconds = (performance.now() - started) / 1000;
        peak.stop();
        if (exit.code !== 0) throw new Error(`leads import exited ${exit.code}: ${proc.stderr()}`);
        const mb = peak.peak() / 1e6;
        peakMb = Math.max(peakMb, mb);
        results[label].push(rows / seconds);
        console.log(`  run ${run} ${label}: ${rows.toLocaleString('en')} rows in ${seconds.toFixed(2)} s = ${Math.round(rows / seconds).toLocaleString('en')} rows/s; peak RSS ${mb.toFixed(0)} MB; load average ${os.loadavg()[0]!.toFixed(1)}`);
      }
    }
    for (const label of ['import', 're-import'] as const) {
      const rates = [...results[label]].sort((a, b) => a - b);
      const median = rates[Math.floor((rates.length - 1) / 2)]!;
      const note = runs > 1 ? `median of ${runs}, worst ${Math.round(rates[0]!).toLocaleString('en')} rows/s` : undefined;
      reportFigure(BENCH, `${label} (${rows.toLocaleString('en')} rows, PostgreSQL)`, Math.round(median), 'rows/s', atLeast(50_000, 'rows/s'), note);
    }
    reportFigure(BENCH, 'leads import peak RSS (PostgreSQL)', Math.round(peakMb), 'MB', atMost(300, 'MB'), 'VmHWM of the command, import and re-import');
  } finally {
    await stopAllProcesses();
    await target.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Every lead gone, as in a fresh database (the campaign stays): the next run's import is a first import again. */
async function emptyTables(target: Awaited<ReturnType<typeof benchTarget>>): Promise<void> {
  const handle = await target.open();
  try {
    await sql`truncate leads, lead_contacts, lead_counts cascade`.execute(handle.db);
  } finally {
    await handle.close();
  }
}

await main();

// Lead import as a user meets it (issue 11): generates a lead CSV (default 1,000,000 rows)
// in a temp dir, then times `campaignd leads import FILE --campaign bench` through the
// package's bin (bin/campaignd.js, executed itself so that its #! node flags apply, running
// the compiled build), the whole command from spawn to exit: reading the config, opening
// and migrating a fresh database, the import, the summary. Then the same command again
// into the same database: the idempotent re-import of unchanged rows. Goals (issue 3):
// ≥ 50,000 rows/s, peak resident memory (VmHWM) < 300 MB, both runs. Then (issue 16) the
// same rows ';'-separated (the csv-parse path) and as an .xlsx workbook: goal for the
// workbook ≥ 20,000 rows/s under 400 MB, the whole command likewise.
//
//   npm run build && npx tsx bench/import-leads.ts [rows]     (npm run bench builds first)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import readline from 'node:readline';
import ExcelJS from 'exceljs';
import { performance } from 'node:perf_hooks';
import type { ImportSummary } from '../src/leads/import.js';
import { buildIfStale } from '../test/helpers/build.js';
import { BIN, spawnExecutable, stopAllProcesses } from '../test/helpers/processes.js';
import { atLeast, atMost, reportFigure } from './lib/figures.js';
import { followProcPeak } from './lib/rss.js';

const BENCH = 'import-leads';
const rows = Number(process.argv[2] ?? 1_000_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-'));
const csv = path.join(dir, 'leads.csv');
const dbFile = path.join(dir, 'cli.db');

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

/** The CSV with ';' between fields (its only commas are inside quoted fields, kept as they are). */
async function toSemicolons(from: string, to: string): Promise<void> {
  const out = fs.createWriteStream(to);
  for await (const line of readline.createInterface({ input: fs.createReadStream(from), crlfDelay: Infinity })) {
    const converted = line.replace(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/g, ';');
    if (!out.write(`${converted}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/**
 * The CSV's rows as an .xlsx, written by exceljs's streaming writer with shared strings
 * (as Excel saves): headers a CRM would use, +49 numbers stored as numbers without their
 * "+" (as Excel keeps a typed +4915…), invalid, duplicate and secondary numbers as in the CSV.
 */
async function generateXlsx(file: string, n: number): Promise<void> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true, useStyles: false });
  const ws = wb.addWorksheet('Leads');
  ws.addRow(['Phone', 'First name', 'Last name', 'Plan', 'TZ', 'Mobile']).commit();
  const zones = ['', '', 'Europe/Berlin', 'America/New_York', ''];
  for (let i = 0; i < n; i++) {
    const at = i % 100 === 13 ? i - 2 : i;
    let phone: string | number = at % 2 === 0 ? `+1555${String(1_000_000 + at).slice(-7)}` : Number(`4915${String(100_000_000 + at)}`);
    if (i % 100 === 7) phone = 'n/a';
    const secondary = i % 10 === 3 ? `+4930${String(10_000_000 + i)}` : null;
    ws.addRow([phone, `First${i}`, `Last, ${i}`, i % 3 === 0 ? 'gold' : 'basic', zones[i % zones.length] || null, secondary]).commit();
    // Let the writer's zip stream drain now and then, or it buffers the whole sheet.
    if (i % 10_000 === 0) await new Promise((r) => setImmediate(r));
  }
  ws.commit();
  await wb.commit();
}

/** A daemon config and a campaign file naming the CSV, for `campaignd leads import`. */
function writeCliConfig(): string {
  fs.mkdirSync(path.join(dir, 'campaigns'));
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${dbFile}\ncampaigns_dir: ./campaigns\n`);
  // JSON is YAML: a campaign calling every day, all day.
  const campaign = {
    assistant_id: 1, timezone: 'UTC', allowed_days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'],
    allowed_hours_start_time: '00:00:00', allowed_hours_end_time: '00:00:00', max_calls_in_parallel: 5, max_retries: 2, retry_interval: 3600,
    leads: { file: csv },
  };
  fs.writeFileSync(path.join(dir, 'campaigns', 'bench.yaml'), JSON.stringify(campaign));
  return configPath;
}

/** `campaignd leads import` through the bin, to its exit: the summary, wall seconds and peak VmHWM in MB. */
async function cliImport(
  label: string,
  configPath: string,
  input: { file: string; db: string; args?: string[] } = { file: csv, db: dbFile },
): Promise<{ summary: ImportSummary; seconds: number; mb: number; cpuSeconds: number }> {
  const started = performance.now();
  const proc = spawnExecutable(`leads import (${label})`, BIN, ['leads', 'import', input.file, '--campaign', 'bench', '--config', configPath, '--json', ...(input.args ?? [])], {
    env: { CAMPAIGND_DATABASE: input.db },
  });
  const peak = followProcPeak(proc.pid);
  // CPU seconds of the child, read until it exits (the last ≤ 20 ms are missed): on a
  // shared machine the wall time also counts other processes' work.
  let cpuSeconds = 0;
  const cpu = setInterval(() => (cpuSeconds = procCpuSeconds(proc.pid) ?? cpuSeconds), 20);
  const exit = await proc.exited;
  const seconds = (performance.now() - started) / 1000;
  peak.stop();
  clearInterval(cpu);
  if (exit.code !== 0) throw new Error(`leads import (${label}) exited ${exit.code}: ${proc.stderr().slice(-2000)}`);
  const summary = JSON.parse(proc.stdout()) as ImportSummary;
  if (summary.read !== rows) throw new Error(`leads import (${label}) read ${summary.read} rows of ${rows}`);
  const mb = peak.peak() / 1e6;
  console.log(
    `${`${label}:`.padEnd(11)} ${summary.read.toLocaleString('en')} rows in ${seconds.toFixed(2)} s = ${Math.round(summary.read / seconds).toLocaleString('en')} rows/s, whole command; peak RSS ${mb.toFixed(0)} MB; load average ${os.loadavg()[0]?.toFixed(1)}`,
  );
  console.log(`           accepted ${summary.accepted}, updated ${summary.updated}, unchanged ${summary.unchanged}, duplicates ${summary.duplicates}, invalid ${summary.invalid}`);
  console.log(`           CPU ≥ ${cpuSeconds.toFixed(2)} s = ≤ ${Math.round(summary.read / cpuSeconds).toLocaleString('en')} rows per CPU-second`);
  return { summary, seconds, mb, cpuSeconds };
}

/** User + system CPU seconds of a live process, from /proc/PID/stat; undefined once it is gone. */
function procCpuSeconds(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

try {
  const t0 = performance.now();
  await generate(csv, rows);
  console.log(`generated  ${rows.toLocaleString('en')} rows, ${(fs.statSync(csv).size / 1e6).toFixed(1)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // The bin runs dist/: measure the sources as they are.
  await buildIfStale();
  const configPath = writeCliConfig();
  const first = await cliImport('import', configPath);
  if (first.summary.accepted < rows * 0.9) throw new Error(`only ${first.summary.accepted} of ${rows} rows accepted`);
  const again = await cliImport('re-import', configPath);
  if (again.summary.unchanged !== first.summary.accepted) throw new Error(`re-import: ${again.summary.unchanged} unchanged, expected ${first.summary.accepted}`);
  console.log(`database ${(fs.statSync(dbFile).size / 1e6).toFixed(0)} MB`);
  const note = `${rows.toLocaleString('en')} rows, \`campaignd leads import\` (the bin, executed) from spawn to exit`;
  reportFigure(BENCH, 'leads import, whole command', first.summary.read / first.seconds, 'rows/s', atLeast(50_000, 'rows/s'), note);
  reportFigure(BENCH, 'leads import peak RSS', first.mb, 'MB', atMost(300, 'MB'), `${note}, VmHWM`);
  reportFigure(BENCH, 'leads re-import (unchanged), whole command', again.summary.read / again.seconds, 'rows/s', atLeast(50_000, 'rows/s'), 'the same command again into the same database');
  reportFigure(BENCH, 'leads re-import peak RSS', again.mb, 'MB', atMost(300, 'MB'), 'VmHWM');
  reportFigure(BENCH, 'leads import, rows per CPU-second', first.summary.read / first.cpuSeconds, 'rows/s', undefined, 'the import command\'s own CPU time (user + system), for a loaded machine');

  // The same rows as a ';'-separated file: every format but plain UTF-8 commas goes
  // through csv-parse, and this is why plain commas keep the hand-written reader
  // (src/leads/lead-table.ts, FAST_PATH).
  const semicolonCsv = path.join(dir, 'leads-semicolon.csv');
  await toSemicolons(csv, semicolonCsv);
  const semi = await cliImport("';' csv", configPath, { file: semicolonCsv, db: path.join(dir, 'semicolon.db') });
  if (semi.summary.accepted !== first.summary.accepted) throw new Error(`';' import accepted ${semi.summary.accepted}, comma import ${first.summary.accepted}`);
  reportFigure(BENCH, "leads import, ';'-separated (csv-parse), whole command", semi.summary.read / semi.seconds, 'rows/s', undefined, `${note}; the comma file's rows with ';'`);
  reportFigure(BENCH, "leads import, ';'-separated peak RSS", semi.mb, 'MB', atMost(300, 'MB'), 'VmHWM');

  // An .xlsx workbook of the same rows as Excel writes it (shared strings; half the phone
  // numbers stored as numbers), read through --map like a CRM export.
  const xlsx = path.join(dir, 'leads.xlsx');
  const tx = performance.now();
  await generateXlsx(xlsx, rows);
  console.log(`generated  ${rows.toLocaleString('en')} rows as .xlsx, ${(fs.statSync(xlsx).size / 1e6).toFixed(1)} MB in ${((performance.now() - tx) / 1000).toFixed(1)} s`);
  const book = await cliImport('xlsx', configPath, { file: xlsx, db: path.join(dir, 'xlsx.db'), args: ['--map', 'phone_number=Phone,secondary_phone_numbers=Mobile'] });
  if (book.summary.accepted !== first.summary.accepted) throw new Error(`.xlsx import accepted ${book.summary.accepted}, CSV import ${first.summary.accepted}`);
  reportFigure(BENCH, 'leads import .xlsx, whole command', book.summary.read / book.seconds, 'rows/s', atLeast(20_000, 'rows/s'), `${rows.toLocaleString('en')}-row workbook, first sheet, --map`);
  reportFigure(BENCH, 'leads import .xlsx peak RSS', book.mb, 'MB', atMost(400, 'MB'), 'VmHWM');
  console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}`);
} finally {
  await stopAllProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
}

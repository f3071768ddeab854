// `campaignd results` at scale (issue 13): a store of 1,000,000 leads in 100 campaigns
// (bench/lib/big-store.ts) whose called leads have a kept call result (transcript,
// recording URL, extracted variables) and whose leads carry their own columns; then the
// package's bin (compiled build) as a child process, from spawn to exit, exporting every
// campaign as CSV and as JSONL to a file. Goals: ≤ 30 s and peak resident memory
// (VmHWM) ≤ 150 MB for the whole command.
//
//   npm run build && npx tsx bench/results-export.ts [--quick]     (quick: 200,000 leads)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import { buildIfStale } from '../test/helpers/build.js';
import { BIN, spawnExecutable, stopAllProcesses } from '../test/helpers/processes.js';
import { buildBigStore } from './lib/big-store.js';
import { atMost, isQuick, reportFigure } from './lib/figures.js';
import { followProcPeak } from './lib/rss.js';

const BENCH = 'results-export';
const leads = isQuick() ? 200_000 : 1_000_000;
const campaigns = 100;
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-results-'));
const dbFile = path.join(dir, 'big.db');

/** Gives every lead its own columns and every ended attempt a call result, as a daemon that ran for a while would have. */
function addResults(file: string): number {
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = OFF');
  raw.exec(`update leads set variables_json = '{"first_name":"First ' || id || '","last_name":"Müller, ' || id || '","plan":"' || (case id % 3 when 0 then 'gold' else 'basic' end) || '"}'`);
  const insert = raw.prepare(
    `insert into call_results (attempt_id, campaign_id, lead_id, call_id, status, answered_by, duration_seconds, started_at, ended_at, cost,
       recording_url, transcript_json, extracted_json, evaluation_json, source, received_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'webhook,poll', ?, ?)`,
  );
  const attempts = raw.prepare('select id, campaign_id, lead_id, outcome, sent_at, ended_at from attempts').all() as {
    id: number; campaign_id: number; lead_id: number; outcome: string; sent_at: number; ended_at: number;
  }[];
  const turns = (i: number) =>
    JSON.stringify([
      { text: `Hi First ${i}, this is Ava calling about your renewal.`, sender: 'AI', timestamp: 0 },
      { text: 'Hi, yes, speaking. Tell me more, please — what does the gold plan cost?', sender: 'user', timestamp: 4 },
      { text: 'Gold is 12 € a month, and you keep your number. Shall I send the details?', sender: 'AI', timestamp: 9 },
      { text: 'Yes, please, by email. Call me back on Tuesday at ten.', sender: 'user', timestamp: 15 },
    ]);
  raw.transaction(() => {
    for (const a of attempts) {
      const success = a.outcome === 'success';
      insert.run(
        a.id, a.campaign_id, a.lead_id, String(a.id), success ? 'completed' : 'no-answer', success ? 'human' : null, success ? 42 : 0,
        a.sent_at, a.ended_at, 0.094, success ? `https://recordings.example/${a.id}.mp3` : null,
        success ? turns(a.lead_id) : null,
        success ? JSON.stringify({ interested: a.id % 2 === 0, callback: 'Tuesday 10:00', email: `first${a.lead_id}@example.com` }) : null,
        success ? JSON.stringify({ summary: 'interested in gold', score: 4 }) : null,
        a.ended_at, a.ended_at,
      );
    }
  })();
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
  return attempts.length;
}

/** `campaignd results` through the bin, to its exit: wall seconds, peak VmHWM in MB, and the output's size. */
async function cliExport(label: string, args: string[], configPath: string, output: string): Promise<{ seconds: number; mb: number; bytes: number }> {
  const started = performance.now();
  const proc = spawnExecutable(`results (${label})`, BIN, ['results', ...args, '--config', configPath, '--output', output]);
  const peak = followProcPeak(proc.pid);
  const exit = await proc.exited;
  const seconds = (performance.now() - started) / 1000;
  peak.stop();
  if (exit.code !== 0) throw new Error(`results (${label}) exited ${exit.code}: ${proc.stderr().slice(-2000)}`);
  const bytes = fs.statSync(output).size;
  const mb = peak.peak() / 1e6;
  console.log(`${`${label}:`.padEnd(8)} ${seconds.toFixed(2)} s, peak RSS ${mb.toFixed(0)} MB, ${(bytes / 1e6).toFixed(0)} MB written; ${proc.stderr().trim()}; load average ${os.loadavg()[0]?.toFixed(1)}`);
  return { seconds, mb, bytes };
}

/** Records in a JSONL file, or CSV records (header aside) when none of its fields spans lines. */
function countLines(file: string): number {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  let n = 0;
  try {
    for (let read; (read = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) for (let i = 0; i < read; i++) if (buf[i] === 10) n++;
  } finally {
    fs.closeSync(fd);
  }
  return n;
}

try {
  const t0 = performance.now();
  const built = await buildBigStore(dbFile, leads, campaigns, NOW);
  const results = addResults(dbFile);
  console.log(`store    ${built.leads.toLocaleString('en')} leads in ${campaigns} campaigns, ${results.toLocaleString('en')} call results, ${(fs.statSync(dbFile).size / 1e6).toFixed(0)} MB, built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await buildIfStale();
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${dbFile}\ncampaigns_dir: ./campaigns\n`);

  const csv = await cliExport('csv', [], configPath, path.join(dir, 'results.csv'));
  if (countLines(path.join(dir, 'results.csv')) !== leads + 1) throw new Error('the CSV does not hold one record per lead');
  const jsonl = await cliExport('jsonl', ['--format', 'jsonl'], configPath, path.join(dir, 'results.jsonl'));
  if (countLines(path.join(dir, 'results.jsonl')) !== leads) throw new Error('the JSONL does not hold one line per lead');
  const one = await cliExport('one', ['campaign-042'], configPath, path.join(dir, 'one.csv'));

  const note = `${leads.toLocaleString('en')} leads in ${campaigns} campaigns, ${results.toLocaleString('en')} with a call result; \`campaignd results\` (the bin, executed) from spawn to exit`;
  reportFigure(BENCH, 'results export CSV, whole command', csv.seconds, 's', atMost(30, 's'), note);
  reportFigure(BENCH, 'results export CSV peak RSS', csv.mb, 'MB', atMost(150, 'MB'), `${note}, VmHWM`);
  reportFigure(BENCH, 'results export JSONL, whole command', jsonl.seconds, 's', atMost(30, 's'), `${note}; transcripts and every attempt`);
  reportFigure(BENCH, 'results export JSONL peak RSS', jsonl.mb, 'MB', atMost(150, 'MB'), 'VmHWM');
  reportFigure(BENCH, 'results export of one campaign (1 of 100)', one.seconds, 's', undefined, 'CSV; scans every lead once');
  console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}`);
} finally {
  await stopAllProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
}

// `npx tsx bench/count-triggers.ts [--quick]`: what the status counters of migration
// 0002 (triggers on leads and attempts that keep lead_counts and attempt_counts) add to
// the writes on the engine's hot path and to a lead import. Two database files with the
// same rows, one at 0001 (no triggers) and one at the latest schema, written with the
// same statements in alternating rounds; SQLite directly (better-sqlite3 with the
// daemon's pragmas), so that only the database's own cost is compared:
//  - attempt INSERT (the claim's new attempt);
//  - lead state UPDATE pending → calling (the claim), calling → retry-scheduled and
//    calling → completed (an outcome; completed also enters the leads_finished index);
//    each 1,000 to a transaction: the statements' own cost, without the commit;
//  - one claim (attempt INSERT + lead UPDATE) committed on its own, for scale;
//  - import: multi-row INSERTs of 1,024 leads, as `leads import` writes them.
// Standalone on purpose: the engine benchmarks move with the engine's own changes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import { migrations } from '../migrations/index.js';
import { openDatabase } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { isQuick, reportFigure } from './lib/figures.js';
import { fmt, percentile } from './lib/stats.js';

const BENCH = 'count-triggers';
const quick = isQuick();
const ROUNDS = quick ? 3 : 9;
const PER_ROUND = quick ? 2_000 : 5_000;
const CAMPAIGNS = 10;
const IMPORT_ROWS = quick ? 20_480 : 51_200;
const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);

interface Variant {
  name: string;
  raw: SqliteDatabase.Database;
  nextLead: number;
  insertAttempt: (leadId: number) => void;
  toCalling: (leadId: number) => void;
  toRetry: (leadId: number) => void;
  toCompleted: (leadId: number) => void;
  importRows: (rows: unknown[]) => void;
}

type Part = 'attempt INSERT' | 'lead UPDATE pending → calling' | 'lead UPDATE calling → retry-scheduled' | 'lead UPDATE calling → completed' | 'claim, committed alone' | 'import';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-triggers-'));
try {
  console.log(`${BENCH}: ${ROUNDS} rounds of ${PER_ROUND.toLocaleString('en')} writes of each kind per variant${quick ? ' (quick)' : ''}`);
  const without = await open('without', path.join(dir, 'a.db'), { '0001_initial': migrations['0001_initial']! });
  const withT = await open('with', path.join(dir, 'b.db'), migrations);
  const variants = [without, withT];
  const samples = new Map<string, number[]>();
  const record = (v: Variant, part: Part, value: number): void => {
    const key = `${v.name}|${part}`;
    samples.set(key, [...(samples.get(key) ?? []), value]);
  };
  /** µs per write of `fn` over `ids`, 1,000 to a transaction, after a checkpoint. */
  const perWrite = (v: Variant, ids: number[], fn: (id: number) => void): number => {
    // Neither variant pays for the other's WAL (SQLite checkpoints by itself at ~40 MB).
    v.raw.pragma('wal_checkpoint(TRUNCATE)');
    const t0 = performance.now();
    for (let i = 0; i < ids.length; i += 1000) tx(v, () => ids.slice(i, i + 1000).forEach(fn));
    return ((performance.now() - t0) * 1000) / ids.length;
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which variant goes first, so that drift of the machine falls on both.
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      const leads = take(v, PER_ROUND);
      record(v, 'attempt INSERT', perWrite(v, leads, v.insertAttempt));
      record(v, 'lead UPDATE pending → calling', perWrite(v, leads, v.toCalling));
      const half = leads.length / 2;
      record(v, 'lead UPDATE calling → retry-scheduled', perWrite(v, leads.slice(0, half), v.toRetry));
      record(v, 'lead UPDATE calling → completed', perWrite(v, leads.slice(half), v.toCompleted));

      const alone = take(v, PER_ROUND / 5);
      v.raw.pragma('wal_checkpoint(TRUNCATE)');
      let t0 = performance.now();
      for (const id of alone) tx(v, () => {
        v.insertAttempt(id);
        v.toCalling(id);
      });
      record(v, 'claim, committed alone', ((performance.now() - t0) * 1000) / alone.length);

      const rows = importRows(round, IMPORT_ROWS);
      v.raw.pragma('wal_checkpoint(TRUNCATE)');
      t0 = performance.now();
      for (let i = 0; i < IMPORT_ROWS; i += 2048) {
        tx(v, () => {
          v.importRows(rows.slice(i * 12, (i + 1024) * 12));
          v.importRows(rows.slice((i + 1024) * 12, (i + 2048) * 12));
        });
      }
      record(v, 'import', IMPORT_ROWS / ((performance.now() - t0) / 1000));
    }
  }

  const med = (v: Variant, part: Part): number => percentile(samples.get(`${v.name}|${part}`) ?? [], 0.5);
  for (const part of ['attempt INSERT', 'lead UPDATE pending → calling', 'lead UPDATE calling → retry-scheduled', 'lead UPDATE calling → completed', 'claim, committed alone'] as const) {
    const a = med(without, part);
    const b = med(withT, part);
    reportFigure(BENCH, `${part}: added by the triggers`, b - a, 'µs', undefined, `median of ${ROUNDS} rounds: ${fmt(a, 2)} µs without, ${fmt(b, 2)} µs with`);
  }
  const ia = med(without, 'import');
  const ib = med(withT, 'import');
  reportFigure(BENCH, 'lead import, SQLite part, with the triggers', ib, 'rows/s', undefined, `${Math.round(ia).toLocaleString('en')} rows/s without (${fmt(((ib - ia) / ia) * 100, 0)} %); INSERTs of 1,024 rows, median of ${ROUNDS}`);
  for (const v of variants) v.raw.close();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

async function open(name: string, file: string, set: typeof migrations): Promise<Variant> {
  const setup = openDatabase(file);
  await migrateToLatest(setup.db, { clock: { now: () => NOW }, migrations: set });
  await setup.close();
  const raw = new SqliteDatabase(file);
  // The daemon's pragmas (src/store/database.ts).
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('cache_size = -32768');
  raw.pragma('wal_autocheckpoint = 10000');
  const campaign = raw.prepare(`insert into campaigns (name, state, assistant_id, timezone, max_calls_in_parallel, config_json, created_at, updated_at) values (?, 'running', 1, 'UTC', 10, '{}', 0, 0)`);
  const lead = raw.prepare(`insert into leads (campaign_id, dedupe_key, phone_number, state, next_due_at, created_at, updated_at) values (?, ?, ?, 'pending', 0, 0, 0)`);
  // Enough leads for every round. The counter rows are few and stay cached whatever the
  // size of leads, so a million leads would not change what the triggers cost.
  const total = ROUNDS * PER_ROUND * 2;
  raw.transaction(() => {
    for (let c = 1; c <= CAMPAIGNS; c++) campaign.run(`campaign-${c}`);
    for (let i = 0; i < total; i++) lead.run((i % CAMPAIGNS) + 1, phone(i), phone(i));
  })();
  raw.pragma('wal_checkpoint(TRUNCATE)');
  const insertAttempt = raw.prepare(
    `insert into attempts (campaign_id, lead_id, contact_position, phone_number, assistant_id, state, counted, created_at, owner) values (?, ?, 0, ?, 1, 'dialing', 1, ?, 'bench')`,
  );
  const toCalling = raw.prepare(
    `update leads set state = 'calling', state_reason = null, contact_attempts = contact_attempts + 1, updated_at = ? where id = ? and state in ('pending', 'retry-scheduled')`,
  );
  const toRetry = raw.prepare(`update leads set state = 'retry-scheduled', state_reason = null, next_due_at = ?, updated_at = ? where id = ?`);
  const toCompleted = raw.prepare(`update leads set state = 'completed', state_reason = null, next_due_at = null, updated_at = ? where id = ?`);
  const columns = 'campaign_id, dedupe_key, phone_number, variables_json, timezone, state, state_reason, next_due_at, source_file, source_line, created_at, updated_at';
  const importStmt = raw.prepare(`insert into leads (${columns}) values ${Array.from({ length: 1024 }, () => `(${Array(12).fill('?').join(', ')})`).join(', ')}`);
  return {
    name,
    raw,
    nextLead: 1,
    // Phone numbers of attempts are unique per lead: the live-phone unique index holds.
    insertAttempt: (leadId) => void insertAttempt.run(((leadId - 1) % CAMPAIGNS) + 1, leadId, phone(leadId - 1), NOW),
    toCalling: (leadId) => void toCalling.run(NOW, leadId),
    toRetry: (leadId) => void toRetry.run(NOW + 60_000, NOW, leadId),
    toCompleted: (leadId) => void toCompleted.run(NOW, leadId),
    importRows: (rows) => void importStmt.run(rows),
  };
}

function phone(i: number): string {
  return `+1555${String(i).padStart(7, '0')}`;
}

/** The next `n` pending leads of a variant (both variants hold the same rows). */
function take(v: Variant, n: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => v.nextLead + i);
  v.nextLead += n;
  return ids;
}

function tx<T>(v: Variant, fn: () => T): T {
  return v.raw.transaction(fn)();
}

/** Row-major values of `n` fresh leads for a new campaign of this round (campaign 1..CAMPAIGNS rotates). */
function importRows(round: number, n: number): unknown[] {
  const values: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const phone = `+1666${String(round).padStart(2, '0')}${String(i).padStart(6, '0')}`;
    values.push((i % CAMPAIGNS) + 1, phone, phone, '{}', null, 'pending', null, NOW, '/bench/leads.csv', i + 2, NOW, NOW);
  }
  return values;
}

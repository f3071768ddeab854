// `npm run bench [-- --quick] [-- --dialect sqlite|postgres] [NAME…]`: runs every benchmark
// in sequence, each in its own child process (so one's memory and timers never colour
// another's), shows their output as it comes, and prints one Markdown results table at the
// end with the machine and the command, then issue 12's figures side by side, SQLite next
// to PostgreSQL. --quick shrinks every benchmark. The benchmarks that take `--dialect`
// run once per database; the PostgreSQL runs share ONE embedded PostgreSQL server started
// here (each bench makes its own database on it). A server that cannot start fails the
// whole run before anything is measured. --dialect X runs only that database's benches.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { POSTGRES_URL_ENV, type BenchDialect } from './lib/bench-db.js';
import { FIGURE_PREFIX, isQuick, parseFigures, type Figure } from './lib/figures.js';
import { clientFigures, importFigures, statusFigures, windowFigures } from './lib/other-benches.js';
import { sideBySideTable } from './lib/side-by-side.js';
import { figuresTable, machineLine } from './lib/table.js';
import { startPostgresServer } from '../test/helpers/postgres-server.js';

interface Bench {
  file: string;
  args: (quick: boolean) => string[];
  /** Figures from readable output, for benchmarks that do not print BENCH-FIGURE lines. */
  parse?: (output: string) => Figure[];
  /**
   * The databases it runs on (default SQLite only). A bench listing both takes
   * `--dialect postgres` for its PostgreSQL run; one for PostgreSQL alone needs no flag.
   */
  dialects?: readonly BenchDialect[];
}

const BOTH: readonly BenchDialect[] = ['sqlite', 'postgres'];

const BENCHES: Bench[] = [
  { file: 'engine-claim.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  { file: 'who-claim.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  { file: 'daemon-memory.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'engine-throughput.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  // Runs SQLite and then PostgreSQL itself: issue 25 judges PostgreSQL ÷ SQLite within one run.
  { file: 'engine-blackbox.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'engine-features.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  { file: 'engine-calls.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  { file: 'engine-retries.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'window.ts', args: () => [], parse: windowFigures },
  { file: 'client-throughput.ts', args: () => [], parse: clientFigures },
  // These take a row count, not flags.
  { file: 'import-leads.ts', args: (q) => [q ? '200000' : '1000000'], parse: importFigures },
  { file: 'import-leads-postgres.ts', args: (q) => [q ? '200000' : '1000000'], dialects: ['postgres'] },
  { file: 'status.ts', args: (q) => [q ? '200000' : '1000000'], parse: statusFigures, dialects: BOTH },
  { file: 'results-export.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'dashboard.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'takeover.ts', args: (q) => (q ? ['--quick'] : []), dialects: ['postgres'] },
  // Writers of one campaign with the status counters of before migration 0037 and of now, side by side.
  { file: 'postgres-writers.ts', args: (q) => [...(q ? ['--quick'] : []), '--before'], dialects: ['postgres'] },
  { file: 'postgres-writers.ts', args: (q) => (q ? ['--quick'] : []), dialects: ['postgres'] },
  { file: 'api.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
  { file: 'api-overhead.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'accounts.ts', args: (q) => (q ? ['--quick'] : []), dialects: BOTH },
];

const quick = isQuick();
const argv = process.argv.slice(2);
const dialectIndex = argv.indexOf('--dialect');
const onlyDialect = dialectIndex >= 0 ? (argv[dialectIndex + 1] as BenchDialect) : null;
if (onlyDialect !== null && onlyDialect !== 'sqlite' && onlyDialect !== 'postgres') throw new Error(`--dialect must be sqlite or postgres, not ${String(onlyDialect)}`);
const only = argv.filter((a, i) => !a.startsWith('--') && !(dialectIndex >= 0 && i === dialectIndex + 1));
const dir = path.dirname(fileURLToPath(import.meta.url));
const command = `npm run bench${quick || onlyDialect ? ' --' : ''}${quick ? ' --quick' : ''}${onlyDialect ? ` --dialect ${onlyDialect}` : ''}${only.length ? ` ${only.join(' ')}` : ''}`;

/** Each selected bench once per database it runs on, SQLite runs first. */
const runs = BENCHES.flatMap((bench) =>
  (bench.dialects ?? ['sqlite'])
    .filter((d) => onlyDialect === null || d === onlyDialect)
    .filter(() => only.length === 0 || only.some((o) => bench.file.startsWith(o)))
    .map((dialect) => ({ bench, dialect })),
);

/** The bench's arguments for one database: `--dialect postgres` when it runs on both. */
function argsFor(bench: Bench, dialect: BenchDialect): string[] {
  const args = bench.args(quick);
  return dialect === 'postgres' && (bench.dialects ?? []).includes('sqlite') ? [...args, '--dialect', 'postgres'] : args;
}

/** Runs one benchmark under the same node and loader (tsx) as this script; never rejects. */
function runBench(bench: Bench, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, path.join(dir, bench.file), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let output = '';
    let pending = '';
    const onData = (chunk: Buffer, sink: NodeJS.WriteStream): void => {
      const text = chunk.toString();
      output += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      // Machine lines are for the table, not for the reader.
      for (const line of lines) if (!line.startsWith(FIGURE_PREFIX)) sink.write(`${line}\n`);
    };
    child.stdout.on('data', (c: Buffer) => onData(c, process.stdout));
    child.stderr.on('data', (c: Buffer) => onData(c, process.stderr));
    child.on('close', (code) => {
      if (pending && !pending.startsWith(FIGURE_PREFIX)) process.stdout.write(`${pending}\n`);
      resolve({ code, output });
    });
  });
}

const figures: Figure[] = [];
const failed: string[] = [];
const started = performance.now();
// One PostgreSQL server for every PostgreSQL run; its failure to start ends the run here.
const postgres = runs.some((r) => r.dialect === 'postgres') ? await startPostgresServer({ fsync: true }) : null;
if (postgres) console.log('PostgreSQL: one embedded server for the PostgreSQL runs (each bench makes its own database)');
try {
  for (const { bench, dialect } of runs) {
    const args = argsFor(bench, dialect);
    const label = `${bench.file}${dialect === 'postgres' ? ' [PostgreSQL]' : ''}`;
    console.log(`\n=== ${label} ${args.join(' ')}`.trimEnd());
    const t0 = performance.now();
    const env = postgres ? { ...process.env, [POSTGRES_URL_ENV]: postgres.url } : process.env;
    const { code, output } = await runBench(bench, args, env);
    console.log(`=== ${label}: ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (code !== 0) failed.push(label);
    figures.push(...[...parseFigures(output), ...(bench.parse?.(output) ?? [])].map((f) => ({ ...f, dialect })));
  }
} finally {
  await postgres?.stop();
}

const minutes = (performance.now() - started) / 60_000;
const misses = figures.filter((f) => f.pass === false).length;
console.log('\n## Results\n');
console.log(`Machine: ${machineLine()}; load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(`Command: \`${command}\` (${minutes.toFixed(1)} min)\n`);
console.log(figuresTable(figures));
if (figures.some((f) => f.dialect === 'postgres')) {
  console.log('\n### SQLite and PostgreSQL side by side (issue 12)\n');
  console.log(sideBySideTable(figures));
}
console.log(`\n${figures.filter((f) => f.pass === true).length} PASS, ${misses} MISS, ${figures.filter((f) => f.pass === null).length} reported without a goal${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);
process.exitCode = failed.length > 0 ? 1 : 0;

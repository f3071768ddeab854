// `npm run bench [-- --quick]`: runs every benchmark in sequence, each in its own child
// process (so one's memory and timers never colour another's), shows their output as it
// comes, and prints one Markdown results table at the end with the machine and the
// command. --quick shrinks every benchmark (a few minutes instead of about ten).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { FIGURE_PREFIX, isQuick, parseFigures, type Figure } from './lib/figures.js';
import { clientFigures, importFigures, statusFigures, windowFigures } from './lib/other-benches.js';
import { figuresTable, machineLine } from './lib/table.js';

interface Bench {
  file: string;
  args: (quick: boolean) => string[];
  /** Figures from readable output, for benchmarks that do not print BENCH-FIGURE lines. */
  parse?: (output: string) => Figure[];
}

const BENCHES: Bench[] = [
  { file: 'engine-claim.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'who-claim.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'daemon-memory.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'engine-throughput.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'engine-calls.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'engine-retries.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'window.ts', args: () => [], parse: windowFigures },
  { file: 'client-throughput.ts', args: () => [], parse: clientFigures },
  // These two take a row count, not flags.
  { file: 'import-leads.ts', args: (q) => [q ? '200000' : '1000000'], parse: importFigures },
  { file: 'status.ts', args: (q) => [q ? '200000' : '1000000'], parse: statusFigures },
  { file: 'results-export.ts', args: (q) => (q ? ['--quick'] : []) },
  { file: 'dashboard.ts', args: (q) => (q ? ['--quick'] : []) },
];

const quick = isQuick();
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dir = path.dirname(fileURLToPath(import.meta.url));
const command = `npm run bench${quick ? ' -- --quick' : ''}${only.length ? ` ${only.join(' ')}` : ''}`;

/** Runs one benchmark under the same node and loader (tsx) as this script; never rejects. */
function runBench(bench: Bench): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, path.join(dir, bench.file), ...bench.args(quick)], {
      stdio: ['ignore', 'pipe', 'pipe'],
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
for (const bench of BENCHES) {
  if (only.length > 0 && !only.some((o) => bench.file.startsWith(o))) continue;
  console.log(`\n=== ${bench.file} ${bench.args(quick).join(' ')}`.trimEnd());
  const t0 = performance.now();
  const { code, output } = await runBench(bench);
  console.log(`=== ${bench.file}: ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (code !== 0) failed.push(bench.file);
  figures.push(...parseFigures(output), ...(bench.parse?.(output) ?? []));
}

const minutes = (performance.now() - started) / 60_000;
const misses = figures.filter((f) => f.pass === false).length;
console.log('\n## Results\n');
console.log(`Machine: ${machineLine()}; load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(`Command: \`${command}\` (${minutes.toFixed(1)} min)\n`);
console.log(figuresTable(figures));
console.log(`\n${figures.filter((f) => f.pass === true).length} PASS, ${misses} MISS, ${figures.filter((f) => f.pass === null).length} reported without a goal${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);
process.exitCode = failed.length > 0 ? 1 : 0;

import { atLeast, atMost, type Figure } from './figures.js';

// Figures of the benchmarks that print only readable lines (window, client, import,
// status): read back from their output, so `npm run bench` shows them in its table.
// A line that is not found is simply left out; the run's own output still shows it.

type Goal = { goal: string; test: (v: number) => boolean };

function num(text: string | undefined): number {
  return text === undefined ? Number.NaN : Number(text.replace(/,/g, ''));
}

function figure(bench: string, name: string, value: number, unit: string, goal?: Goal, note?: string): Figure {
  return { bench, name, value, unit, goal: goal?.goal ?? '', pass: goal ? goal.test(value) : null, ...(note ? { note } : {}) };
}

/** Figures from bench/window.ts output. */
export function windowFigures(out: string): Figure[] {
  const figures: Figure[] = [];
  const joint = /nextOpeningAll[^:]*: mean\s+([\d.]+) µs, p99\s+([\d.]+) µs/.exec(out);
  if (joint) figures.push(figure('window', 'nextOpeningAll p99 (campaign + lead hours)', num(joint[2]), 'µs', atMost(100, 'µs')));
  const worst = /worst case[^:]*: mean\s+([\d.]+) µs, p99\s+([\d.]+) µs/.exec(out);
  if (worst) figures.push(figure('window', 'nextOpening worst case p99 (never opens)', num(worst[2]), 'µs'));
  return figures;
}

/** Figures from bench/client-throughput.ts output. */
export function clientFigures(out: string): Figure[] {
  const figures: Figure[] = [];
  const http = /list_calls over HTTP: .*?concurrency (\d+): ([\d,]+) req\/s; latency p50 ([\d.]+) ms, p99 ([\d.]+) ms/.exec(out);
  if (http) figures.push(figure('client-throughput', 'list_calls through the client', num(http[2]), 'req/s', undefined, `concurrency ${http[1]}, p99 ${http[4]} ms`));
  const parse = /callSchema\.parse: ([\d,]+) records\/s/.exec(out);
  if (parse) figures.push(figure('client-throughput', 'callSchema.parse', num(parse[1]), 'records/s'));
  return figures;
}

/**
 * Figures from bench/import-leads.ts output (goal of issue 3: ≥ 50,000 rows/s under 300 MB).
 * The memory goal is judged on `campaignd leads import` as users run it (BENCH-FIGURE
 * lines of the benchmark itself); the benchmark's own process is only reported.
 */
export function importFigures(out: string): Figure[] {
  const figures: Figure[] = [];
  const first = /^import\s+([\d,]+) rows in ([\d.]+) s = ([\d,]+) rows\/s/m.exec(out);
  if (first) figures.push(figure('import-leads', 'lead import', num(first[3]), 'rows/s', atLeast(50_000, 'rows/s'), `${first[1]} rows`));
  const again = /^re-import\s+([\d,]+) rows in ([\d.]+) s = ([\d,]+) rows\/s/m.exec(out);
  if (again) figures.push(figure('import-leads', 'lead re-import (unchanged)', num(again[3]), 'rows/s', atLeast(50_000, 'rows/s')));
  const rss = /in-process peak RSS\s+([\d.]+) MB/.exec(out);
  if (rss) figures.push(figure('import-leads', 'import peak RSS, in-process (bench under tsx)', num(rss[1]), 'MB', undefined, 'import + re-import; the timing harness, not a user'));
  return figures;
}

/** Figures from bench/status.ts output. */
export function statusFigures(out: string): Figure[] {
  const all = /collectStatus, all (\d+) campaigns: median (\d+) ms, p90 (\d+) ms, max (\d+) ms/.exec(out);
  const built = /built ([\d,]+) leads/.exec(out);
  if (!all) return [];
  return [figure('status', `status, ${all[1]} campaigns (median)`, num(all[2]), 'ms', atMost(300, 'ms'), `${built?.[1] ?? '?'} leads, max ${all[4]} ms`)];
}

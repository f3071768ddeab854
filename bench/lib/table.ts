import os from 'node:os';
import { formatValue, type Figure } from './figures.js';

// The results table printed at the end of `npm run bench` (Markdown, so it can be pasted
// into bench/RESULTS.md and the README as is).

/** One line describing this machine: CPU model, cores, memory, node, OS. */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = (cpus[0]?.model ?? 'unknown CPU').replace(/\s+/g, ' ').trim();
  const memGb = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `${model}, ${cpus.length} cores, ${memGb} GB RAM, node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** A Markdown table with padded columns. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** The figures as a Markdown table: benchmark, database, figure, value, goal, verdict, notes. */
export function figuresTable(figures: readonly Figure[]): string {
  return markdownTable(
    ['benchmark', 'database', 'figure', 'value', 'goal', 'result', 'notes'],
    figures.map((f) => [
      f.bench,
      f.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite',
      f.name,
      `${formatValue(f.value)} ${f.unit}`.trim(),
      f.goal || '—',
      f.pass === null ? 'reported' : f.pass ? 'PASS' : 'MISS',
      f.note ?? '',
    ]),
  );
}

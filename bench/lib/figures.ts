// How a benchmark reports a figure: a readable line for a person running it alone, and a
// `BENCH-FIGURE {json}` line that bench/index.ts collects into the final table.

export interface Figure {
  /** Which benchmark measured it (the script name). */
  bench: string;
  name: string;
  /** The number itself, already in `unit`. */
  value: number;
  unit: string;
  /** The goal as text, e.g. "≤ 5 ms"; empty when the figure is only reported. */
  goal: string;
  /** null: no goal. */
  pass: boolean | null;
  /** Extra context (sample size, settings). */
  note?: string;
  /** The database the run used; stamped by bench/index.ts (absent: SQLite). */
  dialect?: 'sqlite' | 'postgres';
}

export const FIGURE_PREFIX = 'BENCH-FIGURE ';

/** True when the script was started with `--quick` (a smaller run for CI and impatient people). */
export function isQuick(argv: readonly string[] = process.argv): boolean {
  return argv.includes('--quick');
}

/** A goal of the form value ≤ limit. */
export function atMost(limit: number, unit: string): { goal: string; test: (v: number) => boolean } {
  return { goal: `≤ ${limit.toLocaleString('en')} ${unit}`.trim(), test: (v) => Number.isFinite(v) && v <= limit };
}

/** A goal of the form value ≥ limit. */
export function atLeast(limit: number, unit: string): { goal: string; test: (v: number) => boolean } {
  return { goal: `≥ ${limit.toLocaleString('en')} ${unit}`.trim(), test: (v) => Number.isFinite(v) && v >= limit };
}

/** Prints one figure (readable line and machine line) and returns it. */
export function reportFigure(
  bench: string,
  name: string,
  value: number,
  unit: string,
  goal?: { goal: string; test: (v: number) => boolean },
  note?: string,
): Figure {
  const figure: Figure = {
    bench,
    name,
    value,
    unit,
    goal: goal?.goal ?? '',
    pass: goal ? goal.test(value) : null,
    ...(note ? { note } : {}),
  };
  const verdict = figure.pass === null ? 'report' : figure.pass ? 'PASS' : 'MISS';
  console.log(`  ${name}: ${formatValue(value)} ${unit}${figure.goal ? ` (goal ${figure.goal})` : ''} ${verdict}${note ? ` — ${note}` : ''}`);
  console.log(FIGURE_PREFIX + JSON.stringify(figure));
  return figure;
}

/** A number with a sensible count of decimals for its size. */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** Figures found in a child's output (lines starting with FIGURE_PREFIX). */
export function parseFigures(output: string): Figure[] {
  const out: Figure[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith(FIGURE_PREFIX)) continue;
    try {
      out.push(JSON.parse(line.slice(FIGURE_PREFIX.length)) as Figure);
    } catch {
      // A garbled line is skipped; the run's own output still shows it.
    }
  }
  return out;
}

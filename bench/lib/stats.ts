// Small statistics helpers shared by the benchmarks.

/** The p-th percentile (0..1) of `values` by nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Arithmetic mean; NaN when empty. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** p50, p99 and max of `values`, in one object for printing. */
export function summary(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  return { n: values.length, p50: percentile(values, 0.5), p99: percentile(values, 0.99), max: percentile(values, 1) };
}

/** Formats a number with `digits` decimals (or "n/a" for NaN). */
export function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** Microseconds on CLOCK_MONOTONIC, the clock of a V8 CPU profile's samples (any process): bounds for `profile-summary.ts --from/--to`. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

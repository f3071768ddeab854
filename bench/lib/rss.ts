// Resident-memory sampling: the benchmarks report the peak RSS of the phase they measure,
// not of the set-up that preceded it (building a million-row file is not the daemon's cost).

export interface RssSampler {
  /** Peak RSS in bytes since start (or the last reset). */
  peak(): number;
  /** Starts a new phase: the peak restarts from the current RSS. */
  reset(): void;
  stop(): void;
}

/** Samples process RSS every `intervalMs` real milliseconds (benchmarks run on real time). */
export function sampleRss(intervalMs = 20): RssSampler {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, intervalMs);
  timer.unref();
  return {
    peak: () => Math.max(peak, process.memoryUsage.rss()),
    reset: () => {
      peak = process.memoryUsage.rss();
    },
    stop: () => clearInterval(timer),
  };
}

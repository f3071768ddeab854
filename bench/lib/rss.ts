// Resident-memory sampling: the benchmarks report the peak RSS of the phase they measure,
// not of the set-up that preceded it (building a million-row file is not the daemon's cost).
// readProcMemory reads another process's figures, for benchmarks of a real daemon.
import fs from 'node:fs';

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

/** Resident memory of another process, from /proc/PID/status (Linux). */
export interface ProcMemory {
  /** Resident set now (VmRSS), bytes. */
  rss: number;
  /** Highest resident set since the process started (VmHWM), bytes: catches peaks between samples. */
  hwm: number;
}

/** Reads VmRSS and VmHWM of `pid`; null once the process is gone. */
export function readProcMemory(pid: number): ProcMemory | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/**
 * Follows VmHWM of another process every `intervalMs` until stopped. A process that exits
 * takes its last few milliseconds with it: `peak()` is the highest value read.
 */
export function followProcPeak(pid: number, intervalMs = 20): { peak(): number; stop(): void } {
  let peak = 0;
  const read = (): void => {
    const m = readProcMemory(pid);
    if (m && m.hwm > peak) peak = m.hwm;
  };
  read();
  const timer = setInterval(read, intervalMs);
  return {
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
}

/** CPU seconds (user + system) another process has used so far, from /proc/PID/stat; null once it is gone. */
export function readProcCpuSeconds(pid: number): number | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are 14th and 15th.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK) is not reachable from node). */
const CLOCK_TICKS_PER_SECOND = 100;

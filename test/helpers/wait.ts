// Awaiting a condition instead of sleeping a guessed amount: the test goes on the moment
// the condition holds, and fails with a message saying what it was waiting for.

const FIRST_PAUSE_MS = 5;
const QUICK_MS = 1_000;
const MAX_PAUSE_MS = 100;

export interface WaitOptions {
  /** Real milliseconds before giving up (default 20 000). */
  timeoutMs?: number;
  /**
   * Real milliseconds between checks. Without it the checks are 5 ms apart for the first
   * second, then a twentieth of the time waited so far, at most 100 ms: a condition that holds
   * soon is seen at once, and one that takes a minute is not asked 12,000 times. Most
   * conditions open a database, ask a service or read a process's output; checked every 5 ms
   * through the minute-long waits of the daemon tests they cost a third of one such test's
   * CPU (callback-sigkill: 35 CPU-seconds, 14 with the spread), on a machine `npm test` keeps
   * busy.
   */
  intervalMs?: number;
  /** What was awaited, for the failure message; a function is asked at timeout. */
  message?: string | (() => string | Promise<string>);
}

/** Resolves as soon as `cond()` is true; rejects with a clear message after `timeoutMs`. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const started = Date.now();
  const deadline = started + timeoutMs;
  const pause = (): number => {
    if (opts.intervalMs !== undefined) return opts.intervalMs;
    const waited = Date.now() - started;
    return waited < QUICK_MS ? FIRST_PAUSE_MS : Math.min(MAX_PAUSE_MS, waited / 20);
  };
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) {
      const what = typeof opts.message === 'function' ? await opts.message() : (opts.message ?? 'condition');
      throw new Error(`waitUntil: timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await new Promise<void>((resolve) => setTimeout(resolve, pause()));
  }
}

// Awaiting a condition instead of sleeping a guessed amount: the test goes on the moment
// the condition holds, and fails with a message saying what it was waiting for.

export interface WaitOptions {
  /** Real milliseconds before giving up (default 20 000). */
  timeoutMs?: number;
  /** Real milliseconds between checks (default 5). */
  intervalMs?: number;
  /** What was awaited, for the failure message; a function is asked at timeout. */
  message?: string | (() => string | Promise<string>);
}

/** Resolves as soon as `cond()` is true; rejects with a clear message after `timeoutMs`. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const intervalMs = opts.intervalMs ?? 5;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) {
      const what = typeof opts.message === 'function' ? await opts.message() : (opts.message ?? 'condition');
      throw new Error(`waitUntil: timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await new Promise<void>((resolve) => setTimeout(resolve, intervalMs));
  }
}

import type { Clock } from '../time/clock.js';

// A loop's "something changed, look again" bell. A ring before the loop sleeps is kept:
// the next sleep returns at once, so no wake-up is lost between a pass and its sleep.

// A reason of our own: abort() without one builds a DOMException (and its stack) each time.
export const WAKE = 'wake';

export interface WakeSignal {
  /** Ends the current (or the next) sleep. */
  wake(): void;
  /** Sleeps up to `ms` of the clock's time unless woken, then arms the bell again. */
  sleep(clock: Clock, ms: number): Promise<void>;
}

export function createWakeSignal(): WakeSignal {
  let controller = new AbortController();
  return {
    wake() {
      controller.abort(WAKE);
    },
    async sleep(clock, ms) {
      const signal = controller.signal;
      if (!signal.aborted) await clock.sleep(ms, signal);
      controller = new AbortController();
    },
  };
}

import type { Clock } from '../time/clock.js';

// A loop's "something changed, look again" bell. A ring before the loop sleeps is kept:
// the next sleep returns at once, so no wake-up is lost between a pass and its sleep.

// A reason of our own: abort() without one builds a DOMException (and its stack) each time.
const WAKE = 'wake';

export interface WakeSignal {
  /** Ends the current (or the next) sleep. */
  wake(): void;
  /** Whether a wake-up is pending. */
  readonly pending: boolean;
  /** Sleeps up to `ms` of the clock's time unless woken, then arms the bell again. */
  sleep(clock: Clock, ms: number): Promise<void>;
  /** Arms the bell again without sleeping (a pending wake-up is dropped). */
  reset(): void;
}

export function createWakeSignal(): WakeSignal {
  let controller = new AbortController();
  return {
    wake() {
      controller.abort(WAKE);
    },
    get pending() {
      return controller.signal.aborted;
    },
    async sleep(clock, ms) {
      const signal = controller.signal;
      if (!signal.aborted) await clock.sleep(ms, signal);
      controller = new AbortController();
    },
    reset() {
      controller = new AbortController();
    },
  };
}

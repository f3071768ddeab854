import type { Clock } from '../time/clock.js';

// A loop's "something changed, look again" bell. A ring before the loop sleeps is kept:
// the next sleep returns at once, so no wake-up is lost between a pass and its sleep.
//
// A woken sleep returns one turn of the event loop later, never in the turn that rang.
// On SQLite the store answers synchronously, so whatever rang (a webhook's group commit, a
// posted lead) and the whole pass it wakes would otherwise run as ONE uninterrupted task:
// 15–30 ms in which no HTTP request is even read. A turn in between lets the requests
// waiting meanwhile in, and lets the rings of one burst (a second's worth of webhooks)
// wake one pass instead of one each.

// A reason of our own: abort() without one builds a DOMException (and its stack) each time.
export const WAKE = 'wake';

export interface WakeSignal {
  /** Ends the current (or the next) sleep. */
  wake(): void;
  /** Sleeps up to `ms` of the clock's time unless woken (returning a turn later), then arms the bell again. */
  sleep(clock: Clock, ms: number): Promise<void>;
}

export interface WakeSignalOptions {
  /**
   * Runs `fn` after the I/O callbacks of this turn (default `setImmediate`): a turn of the
   * event loop, not a timer, so no time passes for it under any clock.
   */
  defer?: (fn: () => void) => void;
}

export function createWakeSignal(opts: WakeSignalOptions = {}): WakeSignal {
  const defer = opts.defer ?? ((fn: () => void) => void setImmediate(fn));
  let controller = new AbortController();
  return {
    wake() {
      controller.abort(WAKE);
    },
    async sleep(clock, ms) {
      const signal = controller.signal;
      if (!signal.aborted) await clock.sleep(ms, signal);
      if (signal.aborted) await new Promise<void>((resolve) => defer(resolve));
      controller = new AbortController();
    },
  };
}

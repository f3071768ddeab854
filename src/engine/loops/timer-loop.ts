import type { Clock } from '../../time/clock.js';
import type { EngineLoop } from '../engine-types.js';

// A loop driven by the clock's timers: `run` after `firstDelayMs`, then `everyMs` after
// each run has ended (never two runs at once, however slow one is).

export interface TimerLoopOptions {
  firstDelayMs: number;
  everyMs: number;
  run: () => Promise<void>;
  /** A failed run is reported here; the loop goes on. */
  onError: (err: unknown) => void;
}

export function createTimerLoop(clock: Clock, opts: TimerLoopOptions): EngineLoop {
  let stopping = false;
  let cancel: (() => void) | null = null;

  function schedule(delay: number): void {
    cancel = clock.setTimer(delay, () => {
      if (stopping) return;
      opts
        .run()
        .catch(opts.onError)
        .finally(() => {
          if (!stopping) schedule(opts.everyMs);
        });
    });
  }

  return {
    start() {
      stopping = false;
      schedule(opts.firstDelayMs);
    },
    stop() {
      stopping = true;
      cancel?.();
    },
    done: () => Promise.resolve(),
  };
}

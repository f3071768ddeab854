/**
 * The only source of time below the composition root. Production code receives a
 * Clock; tests pass a ManualClock so that a month of campaign runs in milliseconds.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time (never longer than `ms`). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Schedules `fn` after `ms` of this clock's time; returns a cancel function. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** The real clock. Timers are unref'd so that they never keep a finished process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  },
  setTimer(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when told to. `advance` fires due timers in time order and
 * lets the promise jobs they start run before moving on, so awaited chains settle.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private seq = 0;

  constructor(start: number | Date = Date.UTC(2026, 0, 5, 9, 0, 0)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.setTimer(ms, done);
      function done(): void {
        cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms` WITHOUT firing timers: a process stopped (SIGSTOP, a paused
   * VM) sees time jump when it wakes, before any of its timers runs.
   */
  jump(ms: number): void {
    this.current += Math.max(0, ms);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.current + ms);
  }

  /** Moves time to `target` (never backwards), firing due timers in order. */
  async advanceTo(target: number): Promise<void> {
    for (;;) {
      await flushMicrotasks();
      const next = this.nextDue(target);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = Math.max(this.current, target);
    await flushMicrotasks();
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets queued promise jobs (and one turn of I/O callbacks) run. */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Real time sped up `factor` times from `origin` (epoch ms, default: now). Used by the
 * simulator's `--time-scale` and by the demo, where daemon and simulator share it.
 */
export function scaledClock(factor: number, origin: number = Date.now()): Clock {
  if (!(factor > 0)) throw new RangeError(`time scale must be > 0, got ${factor}`);
  const realOrigin = Date.now();
  const toReal = (ms: number): number => Math.max(0, ms) / factor;
  return {
    now: () => origin + (Date.now() - realOrigin) * factor,
    sleep: (ms, signal) => systemClock.sleep(toReal(ms), signal),
    setTimer: (ms, fn) => systemClock.setTimer(toReal(ms), fn),
  };
}

import type { Clock } from '../time/clock.js';

/**
 * The one request budget every call to the service draws from: a token bucket
 * (`burst` tokens, refilled at `requestsPerMinute`) plus a sliding 60 s cap of
 * `requestsPerMinute`, so that neither a burst nor any minute goes over what the
 * service allows. Placing calls has priority over reads: a waiting `make_call` is
 * served before any waiting read. A 429 pauses everyone until the wait it names.
 */

/** `call` (make_call) is served before `read` (everything else). */
export type BudgetPriority = 'call' | 'read';

export interface RateBudgetOptions {
  clock: Clock;
  requestsPerMinute?: number;
  burst?: number;
}

export interface RateBudgetStats {
  /** Requests let through so far. */
  granted: number;
  /** Requests waiting for their turn. */
  waiting: number;
  /** Whole tokens in the bucket now. */
  tokens: number;
  /** Epoch ms until which a 429 holds everyone back (0 when none). */
  pausedUntil: number;
}

export interface RateBudget {
  /** Waits for a turn; resolves with the milliseconds waited. Rejects if aborted or closed. */
  acquire(priority: BudgetPriority, signal?: AbortSignal): Promise<number>;
  /** Holds every request back for `ms` from now (a 429's wait). */
  pause(ms: number): void;
  /** Counters for metrics and tests. */
  stats(): RateBudgetStats;
  /** Rejects every waiter and stops the timer. */
  close(): void;
}

interface Waiter {
  since: number;
  resolve: (waited: number) => void;
  reject: (e: Error) => void;
  detach: () => void;
}

const WINDOW_MS = 60_000;
const EPSILON = 1e-9;

/** Creates a budget on the given clock (defaults: 100 per minute, bursts of 20). */
export function createRateBudget(options: RateBudgetOptions): RateBudget {
  const clock = options.clock;
  const perMinute = options.requestsPerMinute ?? 100;
  const burst = options.burst ?? 20;
  if (!(perMinute > 0) || !(burst >= 1)) throw new RangeError('rate budget needs requestsPerMinute > 0 and burst >= 1');
  const perMs = perMinute / WINDOW_MS;
  // The sliding cap remembers the last `cap` grant times in a ring.
  const cap = Math.max(1, Math.floor(perMinute));
  const ring: number[] = [];
  let ringHead = 0;

  let tokens = burst;
  let refilledAt = clock.now();
  let pausedUntil = 0;
  let granted = 0;
  let closed = false;
  const queues: Record<BudgetPriority, Waiter[]> = { call: [], read: [] };
  let cancelTimer: (() => void) | null = null;
  let timerAt = Infinity;

  function refill(now: number): void {
    if (now > refilledAt) {
      tokens = Math.min(burst, tokens + (now - refilledAt) * perMs);
      refilledAt = now;
    }
  }

  function oldestInWindow(): number | undefined {
    return ring.length < cap ? undefined : ring[ringHead];
  }

  function tryTake(now: number): boolean {
    refill(now);
    if (now < pausedUntil || tokens < 1 - EPSILON) return false;
    const oldest = oldestInWindow();
    if (oldest !== undefined && oldest + WINDOW_MS > now) return false;
    tokens = Math.max(0, tokens - 1);
    if (ring.length < cap) ring.push(now);
    else {
      ring[ringHead] = now;
      ringHead = (ringHead + 1) % cap;
    }
    granted++;
    return true;
  }

  function readyAt(now: number): number {
    let at = Math.max(now, pausedUntil);
    // The small subtraction keeps float noise (600.0000000001 ms) from adding a millisecond.
    if (tokens < 1 - EPSILON) at = Math.max(at, now + Math.ceil((1 - tokens) / perMs - 1e-6));
    const oldest = oldestInWindow();
    if (oldest !== undefined) at = Math.max(at, oldest + WINDOW_MS);
    return at;
  }

  function nextWaiter(): Waiter | undefined {
    return queues.call.shift() ?? queues.read.shift();
  }

  function pump(): void {
    const now = clock.now();
    while (queues.call.length + queues.read.length > 0 && tryTake(now)) {
      const w = nextWaiter();
      if (!w) break;
      w.detach();
      w.resolve(now - w.since);
    }
    if (queues.call.length + queues.read.length === 0) return clearTimer();
    const at = Math.max(readyAt(now), now + 1);
    if (at === timerAt) return;
    clearTimer();
    timerAt = at;
    // A request waiting for its turn is work in progress, so the wake-up is a `sleep`,
    // whose real timer keeps the process alive (setTimer's is unref'd): during start-up
    // a request held back by a 429 can be all there is, and with an empty event loop
    // Node ends the process (exit 13, an unsettled top-level await).
    const wake = new AbortController();
    cancelTimer = () => wake.abort();
    void clock.sleep(at - now, wake.signal).then(() => {
      if (wake.signal.aborted) return;
      cancelTimer = null;
      timerAt = Infinity;
      pump();
    });
  }

  function clearTimer(): void {
    cancelTimer?.();
    cancelTimer = null;
    timerAt = Infinity;
  }

  return {
    acquire(priority, signal) {
      if (closed) return Promise.reject(new Error('rate budget closed'));
      if (signal?.aborted) return Promise.reject(abortError());
      const now = clock.now();
      if (queues.call.length + queues.read.length === 0 && tryTake(now)) return Promise.resolve(0);
      return new Promise<number>((resolve, reject) => {
        const queue = queues[priority];
        const onAbort = (): void => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          reject(abortError());
          pump();
        };
        const waiter: Waiter = {
          since: now,
          resolve,
          reject,
          detach: () => signal?.removeEventListener('abort', onAbort),
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
        pump();
      });
    },
    pause(ms) {
      const now = clock.now();
      pausedUntil = Math.max(pausedUntil, now + Math.max(0, ms));
      if (queues.call.length + queues.read.length > 0) {
        clearTimer();
        pump();
      }
    },
    stats() {
      const now = clock.now();
      refill(now);
      return {
        granted,
        waiting: queues.call.length + queues.read.length,
        tokens: Math.floor(tokens + EPSILON),
        pausedUntil: pausedUntil > now ? pausedUntil : 0,
      };
    },
    close() {
      closed = true;
      clearTimer();
      for (const w of [...queues.call.splice(0), ...queues.read.splice(0)]) {
        w.detach();
        w.reject(new Error('rate budget closed'));
      }
    },
  };
}

/** The error an aborted wait rejects with. */
function abortError(): Error {
  const e = new Error('rate budget wait aborted');
  e.name = 'AbortError';
  return e;
}

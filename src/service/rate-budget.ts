import type { Clock } from '../time/clock.js';

/**
 * The one request budget every call to the service draws from. It mirrors the
 * service's own limiter (docs/design.md §5; its figures: docs/simulator.md): at most `burst` requests in
 * any `burstWindowSeconds` and at most `requestsPerMinute` in any 60 s, both sliding
 * windows counted on request *start*. A token bucket is not enough: refilling while a
 * burst is spent lets ~36 through in 10 s, and each trip of the live limiter costs a
 * whole minute of dialing.
 *
 * The service counts a request when it *arrives*, somewhere between our start and its
 * answer, so a request that travelled longer than a later one could land inside a window
 * the budget thought closed. Hence a request sent through `acquireGrant` stays counted
 * while it is in flight and leaves each window one window-length after it was *settled*
 * (answered, failed or withheld), never after its start: whatever its latency, the
 * service cannot have counted it later than that. (A plain `acquire` is settled at
 * once.) `marginMs` lengthens both windows further, for a service that counts in whole
 * seconds.
 *
 * On top of the windows: a 429 pauses everyone until the wait it names, and the
 * `X-RateLimit-Remaining` / `-Reset` of any answer can only tighten the budget (another
 * client on the same account spends from the same limit). Placing calls has priority
 * over reads: a waiting `make_call` is served before any waiting read.
 */

/** `call` (make_call) is served before `read` (everything else). */
export type BudgetPriority = 'call' | 'read';

export interface RateBudgetOptions {
  clock: Clock;
  /** Requests in any 60 s (default 100). */
  requestsPerMinute?: number;
  /** Requests in any `burstWindowSeconds` (default 20). */
  burst?: number;
  /** Length of the burst window in seconds (default 10). */
  burstWindowSeconds?: number;
  /** How much longer than the service the budget holds each window (default 1000 ms). */
  marginMs?: number;
}

export interface RateBudgetStats {
  /** Requests let through so far. */
  granted: number;
  /** Of those, the ones sent (granted minus released). */
  sent: number;
  /** Requests waiting for their turn. */
  waiting: number;
  /** Epoch ms until which a 429 holds everyone back (0 when none). */
  pausedUntil: number;
  /** 429 answers reported through pause(). */
  rateLimited: number;
  /** Total milliseconds requests waited for their turn. */
  waitedMs: number;
  /** Granted requests not yet settled (in flight). */
  inFlight: number;
  /** Grants counted now by the burst window (in flight included). */
  inBurstWindow: number;
  /** Grants counted now by the minute window. */
  inMinuteWindow: number;
  /** Requests that could start right now (see RateBudget.headroom). */
  headroom: number;
}

/** A granted turn: how long it waited, and its number (for tighten). */
export interface Grant {
  waitedMs: number;
  /** 1 for the first request ever granted, 2 for the next… */
  seq: number;
}

export interface RateBudget {
  /** Waits for a turn; resolves with the milliseconds waited. Rejects if aborted or closed. */
  acquire(priority: BudgetPriority, signal?: AbortSignal): Promise<number>;
  /**
   * acquire() for a request about to be sent: the grant stays counted until `settle(seq)`
   * (call it exactly once, when the answer or failure is in, or when nothing was sent),
   * and names the grant so that its answer's headers can tighten the budget.
   */
  acquireGrant(priority: BudgetPriority, signal?: AbortSignal): Promise<Grant>;
  /** The request of grant `seq` is over: it leaves the windows one window-length from now. */
  settle(seq: number): void;
  /** Grant `seq` was not used (withheld, no token): nothing reached the service, so it leaves the windows at once. */
  release(seq: number): void;
  /** Holds every request back for `ms` from now, and counts a 429 received. */
  pause(ms: number): void;
  /**
   * The service said `remaining` more requests are allowed until `resetAtMs` (epoch ms),
   * in the answer to grant `afterSeq`: from then until `resetAtMs`, at most `remaining`
   * grants, counting those made since `afterSeq` (they may already be counted by the
   * service; counting them again errs on the safe side). Default `afterSeq`: the last
   * grant. Never loosens the windows.
   */
  tighten(remaining: number, resetAtMs: number, afterSeq?: number): void;
  /**
   * How many requests could be granted at this instant without waiting (both windows,
   * any pause or tightening), minus the `make_call` requests already waiting: what a
   * reader may spend without delaying dialing.
   */
  headroom(): number;
  /**
   * The requests the minute window counts now, as ages in ms (0 for one in flight): what
   * another budget for the same account needs to go on from here (`seed`).
   */
  recentAges(): number[];
  /**
   * Counts the account's requests its previous holder sent (several active instances), as
   * ages in ms, as if settled here that long ago: the service counted them, so they take
   * their place in both windows.
   */
  seed(ages: readonly number[]): void;
  /**
   * Forgets the settled requests: the account was handed on with their record, which the
   * next holder counts (and hands back with its own), so keeping them would count them twice.
   */
  forgetSettled(): void;
  /** Counters for metrics and tests. */
  stats(): RateBudgetStats;
  /** Rejects every waiter and stops the timer. */
  close(): void;
}

interface Waiter {
  since: number;
  resolve: (grant: Grant) => void;
  reject: (e: Error) => void;
  detach: () => void;
}

/** "At most grant number `limitSeq` until `until`", from the service's headers. */
interface Ceiling {
  limitSeq: number;
  until: number;
}

const MINUTE_MS = 60_000;

/** Creates a budget on the given clock (defaults: 20 in any 10 s, 100 in any 60 s). */
export function createRateBudget(options: RateBudgetOptions): RateBudget {
  const clock = options.clock;
  const perMinute = Math.floor(options.requestsPerMinute ?? 100);
  const burst = Math.floor(options.burst ?? 20);
  const marginMs = options.marginMs ?? 1000;
  const burstMs = (options.burstWindowSeconds ?? 10) * 1000;
  if (!(perMinute >= 1) || !(burst >= 1) || !(burstMs > 0) || !(marginMs >= 0)) {
    throw new RangeError('rate budget needs requestsPerMinute ≥ 1, burst ≥ 1, burstWindowSeconds > 0 and marginMs ≥ 0');
  }
  const minuteSpan = MINUTE_MS + marginMs;
  const burstSpan = burstMs + marginMs;
  const keepSpan = Math.max(minuteSpan, burstSpan);

  // Grants in flight, by seq: counted by every window until settled.
  const inFlight = new Set<number>();
  // Settle times of the grants still inside the longer window, in order (the clock only
  // moves forward, so appending keeps them sorted).
  let ends: number[] = [];
  let head = 0;
  let ceilings: Ceiling[] = [];
  let pausedUntil = 0;
  let granted = 0;
  let released = 0;
  let rateLimited = 0;
  let waitedMs = 0;
  let closed = false;
  const queues: Record<BudgetPriority, Waiter[]> = { call: [], read: [] };
  let cancelTimer: (() => void) | null = null;
  let timerAt = Infinity;

  function forget(now: number): void {
    while (head < ends.length && (ends[head] as number) <= now - keepSpan) head++;
    if (head > 1024 && head * 2 > ends.length) {
      ends = ends.slice(head);
      head = 0;
    }
    if (ceilings.length > 0) ceilings = ceilings.filter((c) => c.until > now);
  }

  /** Index of the first settled grant a window of `span` ms still counts at `now`. */
  function firstIn(span: number, now: number): number {
    let lo = head;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ends[mid] as number) > now - span) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Grants counted by a window of `span` ms at `now`: in flight, or settled within it. */
  function countIn(span: number, now: number): number {
    return inFlight.size + ends.length - firstIn(span, now);
  }

  /** When a window of `span` ms holding `limit` has room again (Infinity: only a settle frees it). */
  function windowFreeAt(span: number, limit: number, now: number): number {
    const first = firstIn(span, now);
    const excess = inFlight.size + ends.length - first - limit; // ≥ 0 when full
    if (excess < 0) return now;
    const i = first + excess;
    return i < ends.length ? (ends[i] as number) + span : Infinity;
  }

  /** Requests that could be granted at `now` (0 while paused). */
  function room(now: number): number {
    forget(now);
    if (now < pausedUntil) return 0;
    let r = Math.min(perMinute - countIn(minuteSpan, now), burst - countIn(burstSpan, now));
    for (const c of ceilings) r = Math.min(r, c.limitSeq - granted);
    return Math.max(0, r);
  }

  function take(now: number): boolean {
    if (room(now) < 1) return false;
    granted++;
    inFlight.add(granted);
    return true;
  }

  function settle(seq: number): void {
    if (!inFlight.delete(seq)) return;
    const now = clock.now();
    ends.push(Math.max(now, ends[ends.length - 1] ?? now));
    // A window full of in-flight requests has no timer (readyAt is Infinity): now that
    // this one has an end, the wake-up can be planned.
    if (waitingCount() > 0 && timerAt === Infinity) pump();
  }

  /** The earliest instant at which room(…) can be ≥ 1 again (Infinity: when a grant settles). */
  function readyAt(now: number): number {
    let at = Math.max(now, pausedUntil);
    at = Math.max(at, windowFreeAt(minuteSpan, perMinute, now), windowFreeAt(burstSpan, burst, now));
    for (const c of ceilings) if (c.limitSeq <= granted) at = Math.max(at, c.until);
    return at;
  }

  const waitingCount = (): number => queues.call.length + queues.read.length;

  function pump(): void {
    const now = clock.now();
    while (waitingCount() > 0 && take(now)) {
      const w = queues.call.shift() ?? queues.read.shift();
      if (!w) break;
      w.detach();
      waitedMs += now - w.since;
      w.resolve({ waitedMs: now - w.since, seq: granted });
    }
    if (waitingCount() === 0) return clearTimer();
    const ready = readyAt(now);
    // Only in-flight requests fill a window: their settle() pumps again.
    if (ready === Infinity) return clearTimer();
    const at = Math.max(ready, now + 1);
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

  /** Re-plans the wake-up after the rules changed (pause, tighten). */
  function replan(): void {
    if (waitingCount() === 0) return;
    clearTimer();
    pump();
  }

  function acquireGrant(priority: BudgetPriority, signal?: AbortSignal): Promise<Grant> {
    if (closed) return Promise.reject(new Error('rate budget closed'));
    if (signal?.aborted) return Promise.reject(abortError());
    const now = clock.now();
    if (waitingCount() === 0 && take(now)) return Promise.resolve({ waitedMs: 0, seq: granted });
    return new Promise<Grant>((resolve, reject) => {
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
  }

  return {
    acquireGrant,
    acquire: (priority, signal) =>
      acquireGrant(priority, signal).then((g) => {
        settle(g.seq);
        return g.waitedMs;
      }),
    settle,
    release(seq) {
      if (!inFlight.delete(seq)) return;
      released++;
      // Its place in the windows is free again.
      if (waitingCount() > 0) {
        clearTimer();
        pump();
      }
    },
    pause(ms) {
      rateLimited++;
      pausedUntil = Math.max(pausedUntil, clock.now() + Math.max(0, ms));
      replan();
    },
    tighten(remaining, resetAtMs, afterSeq = granted) {
      const now = clock.now();
      if (!Number.isFinite(remaining) || !Number.isFinite(resetAtMs) || resetAtMs <= now) return;
      // Whatever the service counted expires within a minute of now: never hold longer.
      const until = Math.min(resetAtMs, now + minuteSpan);
      const limitSeq = Math.min(afterSeq, granted) + Math.max(0, Math.floor(remaining));
      // A ceiling the minute window alone keeps us under can never bind: not worth keeping.
      if (limitSeq - granted >= perMinute) return;
      // Keep only ceilings no other one makes redundant (lower or equal, lasting as long).
      if (ceilings.some((c) => c.limitSeq <= limitSeq && c.until >= until)) return;
      ceilings = ceilings.filter((c) => !(limitSeq <= c.limitSeq && until >= c.until));
      ceilings.push({ limitSeq, until });
      replan();
    },
    headroom() {
      return Math.max(0, room(clock.now()) - queues.call.length);
    },
    recentAges() {
      const now = clock.now();
      forget(now);
      const settled = ends.slice(firstIn(minuteSpan, now)).map((end) => Math.max(0, now - end));
      return [...Array.from(inFlight, () => 0), ...settled.reverse()];
    },
    seed(ages) {
      const now = clock.now();
      const added = ages.filter((a) => Number.isFinite(a) && a >= 0 && a < keepSpan).map((a) => now - a);
      if (added.length === 0) return;
      // The windows read `ends` in order: merge, then sort what is still counted.
      ends = [...ends.slice(head), ...added].sort((a, b) => a - b);
      head = 0;
      replan();
    },
    forgetSettled() {
      ends = [];
      head = 0;
      replan();
    },
    stats() {
      const now = clock.now();
      const headroom = Math.max(0, room(now) - queues.call.length);
      return {
        granted,
        sent: granted - released,
        waiting: waitingCount(),
        pausedUntil: pausedUntil > now ? pausedUntil : 0,
        rateLimited,
        waitedMs,
        inFlight: inFlight.size,
        inBurstWindow: countIn(burstSpan, now),
        inMinuteWindow: countIn(minuteSpan, now),
        headroom,
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

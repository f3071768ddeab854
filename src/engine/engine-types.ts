import type { ApiStatus } from '../store/types.js';

// Types the supervisor (engine.ts) and its loops share; here so the loops need not import engine.ts.

/** The narrow set of counters the engine reports to. */
export interface EngineMetrics {
  callPlaced(campaign: string): void;
  outcome(campaign: string, outcomeClass: string): void;
  liveCalls(campaign: string, n: number): void;
  /** Live calls over all campaigns (what the daemon-wide max_calls_in_parallel counts). */
  daemonLiveCalls?(n: number): void;
  /** A budgeted campaign's known spending and whether a cap holds it (README, "Budgets"). */
  budget?(campaign: string, spent: number, paused: boolean): void;
  /** Completed leads whose webhook success awaits the call list (status `confirming`). */
  confirming?(campaign: string, n: number): void;
  unknownAttempt(): void;
  /** One pre-dial check, by its verdict: call, cancel, defer (retry_after_seconds) or failed. */
  predialCheck?(campaign: string, result: 'call' | 'cancel' | 'defer' | 'failed'): void;
}

export interface EngineStatus {
  api: ApiStatus;
  apiDetail: string | null;
}

/** One loop with one job, started and stopped by the supervisor. */
export interface EngineLoop {
  start(): void;
  /** Stops at once: no new work is begun (work under way finishes on its own). */
  stop(): void;
  /** Settles when the loop has returned (immediately for a timer-driven one). */
  done(): Promise<void>;
}

/** What the dial loop asks of the loop that reads the call list. */
export interface PollNudge {
  /** Start of the last listing round. */
  lastPollAt(): number;
  /** Read the call list now (an unknown attempt, successes a completion waits for). */
  urgent(): void;
  /** A call was placed: the next listing may come sooner than planned. */
  replan(): void;
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

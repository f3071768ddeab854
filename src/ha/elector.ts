import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';

// Which instance is active (docs/design.md §10). Every `leaseMs / 3` the active instance renews
// its lease and a standby tries to take it; so a standby takes over at most a third of a
// lease after the lease ran out, and the first call after a crash follows within
// `lease_seconds + 5` s.
//
// The database refuses an intent written under a token that is no longer current; this
// side adds the instance's own view, so that it stops claiming BEFORE the database would
// refuse it: the lease counts as held only until `leaseMs - margin` after the start of the
// last renewal that succeeded (start, not end: the database may have extended it at any
// moment of that request). A process frozen past that instant finds, on waking, that its
// lease is gone without asking anyone.

/** The lease operations the elector needs (src/store/lease.ts on its own connection). */
export interface LeasePort {
  take(): Promise<number | null>;
  renew(token: number): Promise<boolean>;
  release(token: number): Promise<void>;
}

export interface ElectorOptions {
  lease: LeasePort;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** This instance became active under `token`: start claiming (after settling what the previous one left). */
  onActive(token: number): void;
  /** This instance is no longer active: stop claiming at once. */
  onStandby(reason: string): void;
}

export interface Elector {
  /** The fencing token while active, else null. */
  token(): number | null;
  /** Whether a claim may be made or a call sent now: active and the local deadline not passed. */
  holds(): boolean;
  /** The database refused a claim under our token: stand by now rather than at the next renewal. */
  lost(reason: string): void;
  start(): void;
  /** Stops electing; an active instance releases its lease so a standby takes over at once. */
  stop(): Promise<void>;
}

/** Margin kept between the local deadline and the lease's own expiry: clock rates and one round trip. */
export function leaseMargin(leaseMs: number): number {
  return Math.min(2_000, Math.floor(leaseMs / 5));
}

export function createElector(opts: ElectorOptions): Elector {
  const { lease, leaseMs, clock } = opts;
  const log = opts.logger.child({ component: 'elector' });
  const everyMs = Math.max(50, Math.floor(leaseMs / 3));
  const margin = leaseMargin(leaseMs);
  let current: number | null = null;
  let deadline = Number.NEGATIVE_INFINITY;
  let stopped = false;
  let cancel: (() => void) | null = null;
  let round: Promise<void> = Promise.resolve();

  function lose(reason: string): void {
    if (current === null) return;
    current = null;
    deadline = Number.NEGATIVE_INFINITY;
    log.warn({ reason }, 'lease lost: standing by');
    opts.onStandby(reason);
  }

  async function once(): Promise<void> {
    const asked = clock.now();
    try {
      if (current !== null) {
        if (asked >= deadline) return lose('the lease ran out before it could be renewed');
        if (await lease.renew(current)) {
          deadline = asked + leaseMs - margin;
        } else {
          lose('another instance holds the lease');
        }
        return;
      }
      const token = await lease.take();
      if (token === null || stopped) {
        if (token !== null) await lease.release(token);
        return;
      }
      current = token;
      deadline = asked + leaseMs - margin;
      log.info({ token }, 'lease taken: active');
      opts.onActive(token);
    } catch (err) {
      // The database is unreachable: an active instance keeps dialing until its local
      // deadline (the claim itself would fail anyway), then stands by.
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease: the database did not answer');
      if (current !== null && clock.now() >= deadline) lose('the database did not answer within the lease');
    }
  }

  function schedule(): void {
    if (stopped) return;
    cancel = clock.setTimer(everyMs, () => {
      round = once().finally(schedule);
    });
  }

  return {
    token: () => current,
    holds: () => current !== null && clock.now() < deadline,
    lost: (reason) => lose(reason),
    start() {
      round = once().finally(schedule);
    },
    async stop() {
      stopped = true;
      cancel?.();
      await round;
      const token = current;
      current = null;
      if (token !== null) {
        try {
          await lease.release(token);
        } catch (err) {
          log.warn({ err: err instanceof Error ? err.message : String(err) }, 'lease: could not release it; a standby takes over when it expires');
        }
      }
    },
  };
}

import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { eraseBefore } from '../store/results-retention.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';

// The daemon's retention sweep: every hour (and a minute after start), personal data
// older than results.retention_days is erased. Its own timer, never on the dialing path.

const FIRST_SWEEP_MS = 60_000;
const SWEEP_EVERY_MS = 3600_000;
const DAY_MS = 86_400_000;

export interface RetentionOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  retentionDays: number;
}

/** One sweep at the clock's now; returns what it erased. */
export async function sweepRetention(opts: RetentionOptions): Promise<{ results: number; leads: number }> {
  const now = opts.clock.now();
  const erased = await eraseBefore(opts.db, now - opts.retentionDays * DAY_MS, now);
  if (erased.results > 0 || erased.leads > 0) {
    opts.logger.info({ ...erased, retentionDays: opts.retentionDays }, 'personal data past results.retention_days erased (counts kept)');
  }
  return erased;
}

/** Starts the sweeps; the returned function stops them (a sweep under way finishes). */
export function startRetentionSweeps(opts: RetentionOptions): () => void {
  let stopped = false;
  let cancel = (): void => {};
  const schedule = (ms: number): void => {
    if (stopped) return;
    cancel = opts.clock.setTimer(ms, () => {
      sweepRetention(opts)
        .catch((err: unknown) => opts.logger.warn({ err: String(err) }, 'retention sweep failed; will try again'))
        .finally(() => schedule(SWEEP_EVERY_MS));
    });
  };
  schedule(FIRST_SWEEP_MS);
  return () => {
    stopped = true;
    cancel();
  };
}

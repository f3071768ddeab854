import type { Kysely, Transaction } from 'kysely';
import type { AttemptCap } from '../rules/types.js';
import { countedAttemptTimes } from '../store/attempts.js';
import { REQUEST_SLACK_MS } from './policy.js';
import type { Database } from '../store/types.js';

// Attempts per number (docs/design.md §11): every attempt to the number counts, in
// every campaign, answered or not, in a rolling window. Read from the attempts table, so
// caps hold across restarts. A call that was never sent (withdrawn, settled as never
// placed, refused by the service) reached nobody and does not count.

type Db = Kysely<Database> | Transaction<Database>;

/** A cap that holds the number back, and until when. */
export interface CapHold {
  cap: AttemptCap;
  /** Attempts in the cap's window now. */
  count: number;
  /** When the oldest of the counted attempts leaves the window, so one more is allowed. */
  until: number;
}

/**
 * The cap that holds `phone` longest at `now`, or null when every cap allows a call.
 * An attempt's call was created somewhere between its row and the 2xx answer (or the end
 * of the call, when that was learnt first), so the attempt counts until the LATEST of
 * those instants leaves the window: the person never sees more than `count` calls in
 * any window, whatever the request took. One indexed query (attempts_phone_created).
 */
export async function capHold(db: Db, caps: readonly AttemptCap[], phone: string, now: number): Promise<CapHold | null> {
  if (caps.length === 0) return null;
  const widest = Math.max(...caps.map((c) => c.windowHours)) * 3_600_000;
  const rows = await countedAttemptTimes(db, phone, now - widest - REQUEST_SLACK_MS);
  // Still live without an answer: the call may be created any moment, so it counts as now.
  const times = rows.map((r) => Number(r.answered_at ?? r.ended_at ?? Math.max(now, Number(r.created_at)))).sort((a, b) => b - a);
  let hold: CapHold | null = null;
  for (const cap of caps) {
    const windowMs = cap.windowHours * 3_600_000;
    const inside = times.filter((t) => t > now - windowMs);
    if (inside.length < cap.count) continue;
    // Newest first: the count-th newest is the one whose leaving the window frees a call.
    const until = inside[cap.count - 1]! + windowMs;
    if (!hold || until > hold.until) hold = { cap, count: inside.length, until };
  }
  return hold;
}

/** One sentence for explain and the lead's state_reason. */
export function capText(hold: CapHold): string {
  const { cap } = hold;
  return `at most ${cap.count} attempt${cap.count === 1 ? '' : 's'} to this number per ${cap.windowHours} h (${cap.origin}): ${hold.count} in the window`;
}

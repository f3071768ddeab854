import { sql, type Kysely, type Transaction } from 'kysely';
import type { AttemptCap } from '../rules/types.js';
import type { Database } from '../store/types.js';

// Attempts per number (product.md section 11): every attempt to the number counts, in
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

/** Attempt states that may have rung the person (rule 6: an unknown one may exist). */
const COUNTED_STATES = sql`('dialing', 'placed', 'unknown', 'ended')`;

/**
 * The cap that holds `phone` longest at `now`, or null when every cap allows a call.
 * One indexed query (attempts_phone_created) reading at most the largest cap's count.
 */
export async function capHold(db: Db, caps: readonly AttemptCap[], phone: string, now: number): Promise<CapHold | null> {
  if (caps.length === 0) return null;
  const widest = Math.max(...caps.map((c) => c.windowHours)) * 3_600_000;
  const most = Math.max(...caps.map((c) => c.count));
  const rows = await db
    .selectFrom('attempts')
    .select('created_at')
    .where('phone_number', '=', phone)
    .where('created_at', '>', now - widest)
    .where(sql<boolean>`state in ${COUNTED_STATES}`)
    .orderBy('created_at', 'desc')
    .limit(most)
    .execute();
  const times = rows.map((r) => Number(r.created_at));
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

// Per-account figures from the SIMULATOR's own record, not from the daemon's word: the
// requests each token made (its limiter's counts, GET /__sim/stats/users) and how many of
// an account's slots held a live call over a window (its calls, GET /__sim/conversations).

/** One token's limiter counts: `allowed` + `refused` is every request it made. */
export interface UserRequests {
  user_index: number;
  allowed: number;
  /** Requests the limiter itself refused (429), trips or not. */
  refused: number;
  /** Times the limiter tripped (a request over a window). */
  trips: number;
}

/** The limiter's counts per token, right now. */
export async function userRequests(simUrl: string): Promise<UserRequests[]> {
  const body = (await (await fetch(`${simUrl}/__sim/stats/users`)).json()) as { rate_limit_by_user: UserRequests[] };
  return body.rate_limit_by_user;
}

/** Requests and 429s per token between two snapshots, by user index. */
export function requestsBetween(before: readonly UserRequests[], after: readonly UserRequests[]): Map<number, { requests: number; refused: number; trips: number }> {
  const start = new Map(before.map((u) => [u.user_index, u]));
  const out = new Map<number, { requests: number; refused: number; trips: number }>();
  for (const u of after) {
    const b = start.get(u.user_index) ?? { allowed: 0, refused: 0, trips: 0 };
    out.set(u.user_index, { requests: u.allowed + u.refused - (b.allowed + b.refused), refused: u.refused - b.refused, trips: u.trips - b.trips });
  }
  return out;
}

/** A call as the service recorded it: placed and ended (null: still live) in epoch ms. */
export interface ServiceCall {
  phone_number: string;
  placed_at_ms: number;
  ended_at_ms: number | null;
}

/** Every call the simulator has placed. */
export async function serviceCalls(simUrl: string): Promise<ServiceCall[]> {
  return ((await (await fetch(`${simUrl}/__sim/conversations`)).json()) as { calls: ServiceCall[] }).calls;
}

/**
 * Slot utilization over [from, to): the time-weighted number of live calls (each live
 * from its placing to its end, as the service saw it; one not ended is live until `to`)
 * divided by `slots`. 1.0 is every slot holding a call the whole time; the dead time
 * between one call's end and the next call's placing (webhook, claim, make_call) is what
 * keeps it below.
 */
export function slotUtilization(calls: readonly ServiceCall[], slots: number, from: number, to: number): number {
  if (!(to > from) || !(slots > 0)) return Number.NaN;
  let busy = 0;
  for (const c of calls) {
    const start = Math.max(from, c.placed_at_ms);
    const end = Math.min(to, c.ended_at_ms ?? to);
    if (end > start) busy += end - start;
  }
  return busy / (slots * (to - from));
}

/**
 * The dead time of a full account's slots, from the service's record: for each call that
 * ended in [from, to) while all `slots` of its account were live, how long until the
 * account's next call was placed (ms). A daemon that refills at once keeps these near its
 * own latency (webhook, claim, make_call); a wait for the request budget shows as a longer
 * gap, and so does anything else that holds the next call back.
 */
export function refillGaps(calls: readonly ServiceCall[], slots: number, from: number, to: number): number[] {
  const events: { at: number; delta: 1 | -1 }[] = [];
  for (const c of calls) {
    events.push({ at: c.placed_at_ms, delta: 1 });
    if (c.ended_at_ms !== null) events.push({ at: c.ended_at_ms, delta: -1 });
  }
  // Ends before placings at the same instant: a slot handed on in the same millisecond was free first.
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const gaps: number[] = [];
  let live = 0;
  const waitingSince: number[] = [];
  for (const e of events) {
    if (e.delta === -1) {
      if (live === slots && e.at >= from && e.at < to) waitingSince.push(e.at);
      live--;
    } else {
      live++;
      const since = waitingSince.shift();
      if (since !== undefined) gaps.push(e.at - since);
    }
  }
  return gaps;
}

// Is this call the one our attempt placed? By time: a call created before the attempt
// was sent (less a clock-skew allowance) belongs to someone or something else. But the
// service writes zone-less times ("YYYY-MM-DD HH:MM:SS") that campaignd reads in
// `api.server_timezone`, and a wrong setting shifts every call by whole hours. Read too
// early, our own call looks older than its attempt: nothing matches, the unknown attempt
// is settled as never placed, and the person is dialled again (found black-box against a
// service writing UTC−11 while the daemon assumed UTC). The rules here keep a wrong zone
// from ever causing a second call.

/** How the detail of an unknown attempt held back from settling begins (explain reads it). */
export const SETTLE_HELD_PREFIX = 'not settled:';

/** How far west of `api.server_timezone` the service's real zone may be and still not cause a second call. */
export const ZONE_DOUBT_MS = 14 * 3600_000;

/** Whether a call created at `createdAt` (null: unreadable) can belong to an attempt sent at `sentAt`. */
export function createdAfterSend(createdAt: number | null, sentAt: number, skewMs: number): boolean {
  return createdAt === null || createdAt >= sentAt - skewMs;
}

/**
 * For a call refused by `createdAfterSend`: whether it would still be the attempt's if
 * the service's zone were up to ZONE_DOUBT_MS west of the configured one.
 */
export function couldBeUnderZoneDoubt(createdAt: number | null, sentAt: number, skewMs: number): boolean {
  return createdAt !== null && createdAt < sentAt - skewMs && createdAt >= sentAt - skewMs - ZONE_DOUBT_MS;
}

/**
 * When a call was created, by our clock, from a post-call webhook, whatever zone its
 * times are in: the call's length (finished − created, both read in the same zone)
 * counted back from the delivery's arrival. A delivery that came late only makes the
 * estimate later, towards accepting the call rather than refusing it.
 */
export function createdByArrival(createdAt: number | null, finishedAt: number | null, receivedAt: number): number | null {
  if (createdAt === null || finishedAt === null || finishedAt < createdAt) return null;
  return receivedAt - (finishedAt - createdAt);
}

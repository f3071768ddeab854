// The engine's policy values in one place: how long it waits, how often it looks, how much
// it reads at once. Each says why it has its value; change one here, not in a copy.
import { stableHash } from '../ha/stable-hash.js';
import { DEFAULT_RETRY_AFTER_MS } from '../service/errors.js';

// Scheduling

/** The longest any loop sleeps, so a suspended machine or a clock jump heals within 30 s. */
export const MAX_SLEEP_MS = 30_000;
/** How often campaign controls (pause, stop, edits) written by other commands are read. */
export const CONTROL_CHECK_MS = 1_000;
/** Due leads read beyond the free slots, for those suppressed or outside their own hours. */
export const CANDIDATE_MARGIN = 8;
/** A lead whose number already has a live call (another lead, rule 3) is looked at again after this. */
export const PHONE_BUSY_DEFER_MS = 30_000;
/** Remote campaigns are followed this often: their state changes by hand, rarely. */
export const REMOTE_FOLLOW_MS = 60_000;
/**
 * Longest a make_call request can take between its attempt row and the answer (client
 * timeouts are far shorter): the per-number caps (caps.ts) still read attempts created
 * this much before their window, since their call may have been created inside it.
 */
export const REQUEST_SLACK_MS = 3_600_000;
/**
 * A claim older than this when its request is about to be sent is not sent: the process
 * stalled (SIGSTOP, a paused VM, a machine swapping) after the claim judged the window,
 * the caps and the campaign. The attempt is withdrawn uncounted and the lead is judged
 * again at once. Ten minutes under REQUEST_SLACK_MS, far more than the request itself may
 * take (client timeouts are seconds), so the caps' assumption holds; far above any
 * rate-budget wait or pre-dial check.
 */
export const CLAIM_MAX_AGE_MS = REQUEST_SLACK_MS - 10 * 60_000;

// Answers of the service

/** After a 422 for the account (balance, plan): the service is asked again only after this, for every campaign. */
export const ACCOUNT_PAUSE_MS = 5 * 60_000;
/** A 429 without Retry-After: the wait the service's rate-limit window suggests (src/service/errors.ts). */
export const RATE_LIMIT_WAIT_MS = DEFAULT_RETRY_AFTER_MS;
/** While the token is rejected, the call list is tried this often to notice it works again. */
export const TOKEN_PROBE_MS = 30_000;

// The pre-dial check (predial.ts)

/** A check that failed (timeout, error, non-2xx, an answer not understood): the lead is asked again after this. */
export const PREDIAL_FAILURE_DEFER_MS = 60_000;
/** The shortest `retry_after_seconds` honoured: an endpoint answering 0 does not get the same lead asked again at once, over and over. */
export const PREDIAL_MIN_RETRY_AFTER_MS = 1_000;
/** The longest `retry_after_seconds` honoured: a lead is not parked for longer than a month by one answer. */
export const PREDIAL_MAX_RETRY_AFTER_MS = 31 * 86_400_000;
/** The longest answer read from a check endpoint; a longer one is a failure. */
export const PREDIAL_MAX_ANSWER_BYTES = 64 * 1024;

// Store errors

/** Tries at recording an answer while the store is busy (SQLITE_BUSY) before leaving it to start-up recovery. */
export const STORE_RETRY_TRIES = 10;
/** The wait between those tries. */
export const STORE_RETRY_MS = 1_000;

// Polling the call list

/** While an attempt is unknown, the call list is read this often: it alone can settle it (rule 6). */
export const POLL_UNKNOWN_MS = 10_000;
/** With webhooks arriving, a listing this often as a backstop for a lost one. */
export const POLL_BACKSTOP_MS = 300_000;
/** Once a call is overdue and a listing did not find its end, the next one after this. */
export const POLL_OVERDUE_MS = 120_000;
/** Without webhooks (poll-plan.ts): listings per ended call aimed at, so a call costs ≈ 1.45 requests. */
export const POLL_PER_CALL = 0.45;
/** The shortest gap between two listings (and the first backoff step after a failed one, ×5). */
export const POLL_MIN_GAP_MS = 1_000;
/** The cadence while an assistant's call durations are still being learnt… */
export const POLL_LEARNING_MS = 10_000;
/** …and while the first webhook is awaited (they usually make polling for ends needless). */
export const POLL_AWAITING_WEBHOOKS_MS = 20_000;
/** The longest wait between listings while calls are live (the plan may stretch it to half a call). */
export const POLL_MAX_GAP_MS = 60_000;
/** Webhooks count as arriving when one came within this long. */
export const WEBHOOKS_HEALTHY_MS = 10 * 60_000;
/** A call live this long without its webhook is looked for in the call list. */
export const CALL_OVERDUE_MS = 4 * 60_000;
/** A warning that the service's times look like another zone is repeated at most this often. */
export const ZONE_WARNING_EVERY_MS = 10 * 60_000;

// Confirming webhook successes (who answered?)

/** Webhook successes awaiting confirmation are listed once this many wait (about a page), or… */
export const CONFIRM_BATCH = 100;
/**
 * …with several accounts, once between half of that and that many wait, a fixed share per
 * account: accounts that dial at the same pace otherwise reached the batch together, and
 * 200 listings of 100 confirmations each, all at once, held the daemon's thread for seconds
 * (bench/RESULTS.md, "200 accounts: the webhooks that timed out").
 */
export function confirmBatchOf(account: string): number {
  const half = Math.floor(CONFIRM_BATCH / 2);
  return half + (stableHash(`confirm\u0000${account}`) % (CONFIRM_BATCH - half + 1));
}
/** …once the oldest of them has waited this long (the backstop's cadence: a listing per ~20 calls). */
export const CONFIRM_WAIT_MS = 300_000;
/**
 * A webhook success is looked for in the call list this long after it ended: long enough
 * for a daemon stopped overnight; a complete listing that does not show the call ends the
 * search sooner.
 */
export const CONFIRM_WINDOW_MS = 24 * 3600_000;

// Matching and settling calls (the poller's defaults, PollerOptions)

/** The service's clock may run this far behind ours: a call created up to 1 min "before" we sent is still ours. */
export const CLOCK_SKEW_MS = 60_000;
/** A placed call is looked for as stuck only this long after its longest possible duration. */
export const STUCK_GRACE_MS = 5 * 60_000;
/** An assistant's max_call_duration when it is not known: the service's upper bound, 20 min. */
export const DEFAULT_MAX_DURATION_SECONDS = 1200;

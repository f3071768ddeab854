import { sql } from 'kysely';
import { DUE_LEAD_STATES, FINISHED_LEAD_STATES, LIVE_ATTEMPT_STATES } from './types.js';

// SQLite uses a partial index (attempts_live_*, leads_due, leads_finished) only when the
// query's state list is written as literals that match the index's WHERE; bound
// parameters make it scan the table. Hot queries therefore filter with these lists, never with arrays.

/** `state IN ('dialing', 'placed', 'unknown')` as literals. */
export const LIVE_ATTEMPT_STATES_SQL = LIVE_ATTEMPT_STATES.map((s) => sql.lit(s));
/** `state IN ('pending', 'retry-scheduled')` as literals. */
export const DUE_LEAD_STATES_SQL = DUE_LEAD_STATES.map((s) => sql.lit(s));
/** `state IN ('completed', 'reached-max-retries')` as literals (the leads_finished index). */
export const FINISHED_LEAD_STATES_SQL = FINISHED_LEAD_STATES.map((s) => sql.lit(s));

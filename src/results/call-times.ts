import type { ExportAttemptRow } from '../store/results-export.js';

// Which clock a call's start and end are read from. Both ends always come from ONE clock:
// the service's own stamps (created_at, and finished_at, or the call list's updated_at of
// an ended call, read in api.server_timezone) when it gave both, else campaignd's (when
// make_call was sent, and when campaignd learned the call had ended). Mixing the two made
// calls end before they started whenever the clocks differ: a skewed server, a wrong
// server_timezone, a simulator running faster than real time.

export type TimesFrom = 'service' | 'campaignd';

export interface CallTimes {
  /** Epoch ms, or null when not known. */
  startedAt: number | null;
  endedAt: number | null;
  /** Whose clock both came from; null when the attempt has neither. */
  from: TimesFrom | null;
}

/** The start and end of an attempt's call, from one clock. */
export function callTimes(a: Pick<ExportAttemptRow, 'started_at' | 'result_ended_at' | 'sent_at' | 'created_at' | 'ended_at'>): CallTimes {
  const started = num(a.started_at);
  const ended = num(a.result_ended_at);
  // Stamps that run backwards are not a span on any clock: campaignd's own is used instead.
  if (started !== null && ended !== null && ended >= started) return { startedAt: started, endedAt: ended, from: 'service' };
  const sent = num(a.sent_at) ?? num(a.created_at);
  return { startedAt: sent, endedAt: num(a.ended_at), from: sent === null ? null : 'campaignd' };
}

function num(v: number | null | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}

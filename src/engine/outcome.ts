// Outcome classes of a call (rule 5, docs/design.md §3.5), from the service's `status`
// and `answered_by`. Pure; the engine decides what to do with each class.

/** What a call's status says about it. */
export type CallClass =
  | 'in-progress'
  | 'success'
  | 'voicemail'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'unknown-status';

const IN_PROGRESS = new Set(['initiated', 'ringing', 'in-progress']);
const ENDED = new Set(['completed', 'ended', 'ended_by_customer', 'ended_by_assistant']);
const FAILURES = new Set(['busy', 'no-answer', 'failed']);

/** Every status the spec lists for a call. */
export const KNOWN_CALL_STATUSES: readonly string[] = [...IN_PROGRESS, ...ENDED, ...FAILURES];

// Being liberal in what we accept (docs/design.md §5): case and surrounding blanks do not matter,
// and `in_progress` / `no_answer` are read as the spec's hyphenated spellings. Anything else
// stays unknown rather than being guessed at.
export function normaliseStatus(status: string): string {
  const s = status.trim().toLowerCase();
  if (s === 'in_progress') return 'in-progress';
  if (s === 'no_answer') return 'no-answer';
  return s;
}

/**
 * Classifies a call. `unknown-status` is worth a log line; callers treat it as still in
 * progress until the status changes (or the stuck-call rule closes it).
 */
export function classifyCall(status: string, answeredBy: string | null | undefined): CallClass {
  const s = normaliseStatus(status);
  if (IN_PROGRESS.has(s)) return 'in-progress';
  if (ENDED.has(s)) return answeredBy?.trim().toLowerCase() === 'machine' ? 'voicemail' : 'success';
  if (s === 'busy' || s === 'no-answer' || s === 'failed') return s;
  return 'unknown-status';
}

/** True iff the status is one of the spec's final statuses (the call is over). */
export function isFinalStatus(status: string): boolean {
  const s = normaliseStatus(status);
  return ENDED.has(s) || FAILURES.has(s);
}

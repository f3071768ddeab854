import type { Generated, Selectable } from 'kysely';

// Row type of migrations/0004_call_results.ts. Times are epoch milliseconds.

/** Which source said it first, then which completed it. */
export type ResultSource = 'webhook' | 'poll' | 'webhook,poll' | 'poll,webhook';

export interface CallResultsTable {
  attempt_id: number;
  campaign_id: number;
  lead_id: number;
  call_id: string | null;
  status: string | null;
  answered_by: string | null;
  duration_seconds: number | null;
  started_at: number | null;
  ended_at: number | null;
  cost: number | null;
  recording_url: string | null;
  /** JSON: a string or a list of turns, as the service sent it. */
  transcript_json: string | null;
  /** JSON object. */
  extracted_json: string | null;
  /** JSON, as the service sent it. */
  evaluation_json: string | null;
  source: ResultSource;
  received_at: number;
  updated_at: number;
  /** When the personal fields were erased (retention or forget); null while kept. */
  erased_at: number | null;
  /**
   * The key of the campaign's success_when the row's extracted_json was judged under, and
   * the judgment (1: it says success); null: not judged (migration 0035).
   */
  success_rule: Generated<string | null>;
  success_match: Generated<number | null>;
}

export type CallResultRow = Selectable<CallResultsTable>;

/** The result fields of one call. null means "not said (yet)": a merge never lets null overwrite a value. */
export interface CallResultFields {
  callId: string | null;
  status: string | null;
  answeredBy: string | null;
  durationSeconds: number | null;
  startedAt: number | null;
  endedAt: number | null;
  cost: number | null;
  recordingUrl: string | null;
  /** A string or a list of turns, as sent. */
  transcript: string | unknown[] | null;
  extracted: Record<string, unknown> | null;
  evaluation: unknown;
}

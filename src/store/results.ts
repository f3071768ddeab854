import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { deferredWrite } from './pg-pipeline.js';
import { namedStatement } from './pg-statement-names.js';
import type { CallResultFields, CallResultRow, ResultSource } from './results-types.js';
import type { Database } from './types.js';
import type { VariableRule } from './variable-match.js';
import { judgmentOf } from './variant-successes.js';

// The call_results repository (migrations/0004_call_results.ts): what the service said of
// each attempt's call. Written by the engine inside the outcome's own transaction.

/** The attempt a result belongs to. */
export interface ResultOwner {
  attemptId: number;
  campaignId: number;
  leadId: number;
}

export interface MergeOptions {
  source: 'webhook' | 'poll';
  now: number;
  /** results.keep_transcripts: false stores no transcript. */
  keepTranscripts: boolean;
  /** The campaign's success_when: the extracted variables are judged under it as they are stored (migration 0035). */
  successWhen?: VariableRule;
}

const KEPT = ['call_id', 'status', 'answered_by', 'duration_seconds', 'started_at', 'ended_at', 'cost'] as const;
/** Fields erased by retention and forget; never filled again once erased. */
export const PERSONAL_RESULT_FIELDS = ['recording_url', 'transcript_json', 'extracted_json', 'evaluation_json'] as const;

/** The columns an insert names, in the order of its parameters. */
const INSERTED = [
  'attempt_id', 'campaign_id', 'lead_id', 'call_id', 'status', 'answered_by', 'duration_seconds', 'started_at', 'ended_at', 'cost',
  'recording_url', 'transcript_json', 'extracted_json', 'evaluation_json', 'source', 'received_at', 'updated_at',
  'success_rule', 'success_match',
] as const;

/**
 * The upsert, compiled once per database: it runs for every ended call, inside the group
 * commit, and building and compiling kysely's tree each time cost more than the insert.
 */
const compiledUpsert = new WeakMap<object, CompiledQuery>();

function upsertFor(db: Kysely<Database>): CompiledQuery {
  const key = db.getExecutor().adapter;
  let compiled = compiledUpsert.get(key);
  if (compiled) return compiled;
  const keep = (col: string): RawBuilder<unknown> => sql`coalesce(${sql.ref(`call_results.${col}`)}, ${sql.ref(`excluded.${col}`)})`;
  const personal = (col: string): RawBuilder<unknown> =>
    sql`case when call_results.erased_at is null then coalesce(${sql.ref(`call_results.${col}`)}, ${sql.ref(`excluded.${col}`)}) else null end`;
  const set: Record<string, RawBuilder<unknown>> = {};
  for (const col of KEPT) set[col] = keep(col);
  for (const col of PERSONAL_RESULT_FIELDS) set[col] = personal(col);
  // The judgment goes with the extracted_json the row ends with: this source's when it
  // fills the row's (or repeats it), the row's own otherwise (SET reads the row of before).
  const judgment = (col: string): RawBuilder<unknown> =>
    sql`case when (call_results.extracted_json is null and call_results.erased_at is null) or (call_results.extracted_json = excluded.extracted_json and excluded.success_rule is not null) then ${sql.ref(`excluded.${col}`)} else ${sql.ref(`call_results.${col}`)} end`;
  set.success_rule = judgment('success_rule');
  set.success_match = judgment('success_match');
  const upsert = db
    .insertInto('call_results')
    .values(Object.fromEntries(INSERTED.map((c) => [c, null])) as never)
    .onConflict((oc) =>
      oc.column('attempt_id').doUpdateSet({
        ...set,
        // "webhook" then "poll" reads "webhook,poll": who said it first, then who completed it.
        source: sql`case when call_results.source = excluded.source or call_results.source like '%,%' then call_results.source else call_results.source || ',' || excluded.source end`,
        updated_at: sql`excluded.updated_at`,
      } as never),
    )
    .compile();
  compiled = namedStatement(db, upsert);
  if (compiled.parameters.length !== INSERTED.length) throw new Error('call_results upsert: unexpected parameters');
  compiledUpsert.set(key, compiled);
  return compiled;
}

/**
 * Records what one source said of an attempt's call. The first source fills the row, the
 * other completes it: a known field is never overwritten (by null or otherwise), and
 * fields erased by retention or `forget` stay erased.
 */
export async function mergeCallResult(db: Kysely<Database>, owner: ResultOwner, f: CallResultFields, opts: MergeOptions): Promise<void> {
  const transcript = opts.keepTranscripts && f.transcript !== null ? JSON.stringify(f.transcript) : null;
  const extracted = f.extracted === null ? null : JSON.stringify(f.extracted);
  const values: Record<(typeof INSERTED)[number], unknown> = {
    attempt_id: owner.attemptId,
    campaign_id: owner.campaignId,
    lead_id: owner.leadId,
    call_id: f.callId,
    status: f.status,
    answered_by: f.answeredBy,
    duration_seconds: f.durationSeconds,
    started_at: f.startedAt,
    ended_at: f.endedAt,
    cost: f.cost,
    recording_url: f.recordingUrl,
    transcript_json: transcript,
    extracted_json: extracted,
    evaluation_json: f.evaluation === null || f.evaluation === undefined ? null : JSON.stringify(f.evaluation),
    source: opts.source,
    received_at: opts.now,
    updated_at: opts.now,
    ...judgmentOf(opts.successWhen, extracted),
  };
  const compiled = upsertFor(db);
  // Nothing reads its answer: on PostgreSQL it goes with the outcome's next statement (pg-pipeline.ts).
  await db.executeQuery(deferredWrite(db, { ...compiled, parameters: INSERTED.map((c) => values[c]) }));
}

/** The result of one attempt, if any. */
export async function callResultOf(db: Kysely<Database>, attemptId: number): Promise<CallResultRow | undefined> {
  return db.selectFrom('call_results').selectAll().where('attempt_id', '=', attemptId).executeTakeFirst();
}

/** Parses a stored JSON column; null when empty. */
export function parseStoredJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

export type { ResultSource };

import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import { durableTransaction } from './durable.js';
import { readLeadsAhead } from './lead-transitions.js';
import { prepared } from './prepared.js';
import { DUE_LEAD_STATES_SQL, LIVE_ATTEMPT_STATES_SQL } from './state-lists.js';
import {
  type AttemptRow,
  type AttemptState,
  type Database,
  type OutcomeClass,
  type OutcomeSource,
} from './types.js';

// The attempt repository: every state change of the at-most-once protocol (rule 6) is
// a conditional UPDATE on the state it expects, so a late answer, a duplicate webhook or
// a stale worker can never move an attempt backwards or finish it twice.

type Db = Kysely<Database> | Transaction<Database>;

/** Live attempts per campaign id (rule 2), read from the database so limits survive restarts. */
export async function liveCountsByCampaign(db: Db, scope?: CampaignScope): Promise<Map<number, number>> {
  if (scope?.length === 0) return new Map();
  // Scoped (one account's engine among many): its campaigns' rows of the live index only,
  // not every account's live calls at each of its passes.
  const rows = scope === undefined ? await liveCountsQuery.rows(db, {}) : await liveCountsScoped(scope.length).rows(db, Object.fromEntries(scope.map((id, i) => [`c${i}`, id])));
  return new Map(rows.map((r) => [Number(r.campaign_id), Number(r.n)]));
}

/**
 * The scoped count, prepared once per number of campaigns in the scope (each account's
 * dial pass runs it: building it anew each time was a measurable share of the daemon's CPU).
 */
const liveCountsScopedBySize = new Map<number, ReturnType<typeof preparedLiveCountsScoped>>();
function liveCountsScoped(size: number): ReturnType<typeof preparedLiveCountsScoped> {
  let query = liveCountsScopedBySize.get(size);
  if (!query) liveCountsScopedBySize.set(size, (query = preparedLiveCountsScoped(size)));
  return query;
}
function preparedLiveCountsScoped(size: number) {
  return prepared((db, v: Record<string, number>) =>
    liveCountsBuilder(db).where('attempts.campaign_id', 'in', Array.from({ length: size }, (_, i) => v[`c${i}`]!)),
  );
}

function liveCountsBuilder(db: Db) {
  return db
    .selectFrom('attempts')
    .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .groupBy('campaign_id');
}

const liveCountsQuery = prepared((db) => liveCountsBuilder(db));

/**
 * The campaigns one engine reads (its account's, README "Many accounts"); undefined: every
 * campaign. With many accounts each engine's poller must see only its own calls: reading
 * the whole daemon's and filtering afterwards made every account list its calls whenever
 * any account had a backlog.
 */
export type CampaignScope = readonly number[] | undefined;

/** The query limited to the scope's campaigns (an empty scope is answered without a query by the callers). */
function scoped<QB extends SelectQueryBuilder<Database, 'attempts', object>>(query: QB, scope: CampaignScope): QB {
  return scope === undefined ? query : (query.where('attempts.campaign_id', 'in', scope) as QB);
}

/** Every live attempt (of the scope's campaigns), oldest first. Few rows: at most the sum of the live-call limits. */
export async function listLiveAttempts(db: Db, scope?: CampaignScope): Promise<AttemptRow[]> {
  if (scope?.length === 0) return [];
  return scoped(db.selectFrom('attempts').selectAll().where('state', 'in', LIVE_ATTEMPT_STATES_SQL), scope).orderBy('id').execute();
}

/** When the oldest call still in progress (state `placed`) was sent; null when none. */
export async function oldestPlacedAt(db: Db, scope?: CampaignScope): Promise<number | null> {
  if (scope?.length === 0) return null;
  const row = await scoped(
    db
      .selectFrom('attempts')
      .select((eb) => eb.fn.min('sent_at').as('at'))
      .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
      .where('state', '=', 'placed'),
    scope,
  ).executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

export interface ClaimInput {
  campaignId: number;
  leadId: number;
  contactPosition: number;
  phoneNumber: string;
  assistantId: number;
  owner: string;
  now: number;
  /**
   * The lease of the lead's account the claim is made under (several active instances):
   * the database refuses the whole claim, with SQLSTATE CDL01, when it is not current.
   * Without it, the batch's ClaimFence applies.
   */
  accountFence?: { account: string; fence: number };
}

/**
 * The lease a claim is made under (PostgreSQL with several instances, docs/design.md §10):
 * the database refuses the claim, with SQLSTATE CDL01, when the token is not current.
 */
export interface ClaimFence {
  fenceToken?: number;
}

export type ClaimResult = { ok: true; attempt: AttemptRow } | { ok: false; reason: 'lead-not-due' | 'phone-live' };

/**
 * Commits a new attempt (state `dialing`) and moves its lead to `calling`, in one
 * transaction. This commit happens before make_call is sent: from here on the call
 * may exist, and only a definite answer or the call list can say otherwise.
 */
export async function claimAttempt(db: Kysely<Database>, input: ClaimInput): Promise<ClaimResult> {
  const [result] = await claimAttempts(db, [input]);
  return result!;
}

/**
 * `claimAttempt` for many leads in ONE transaction (a scheduler pass fills every free
 * slot at once): one commit instead of one per call. Each input is claimed or refused on
 * its own, in order: its lead is no longer due, or its number has a live call (rule 3),
 * including one claimed earlier in the same batch. Results are in the order of `inputs`.
 */
export async function claimAttempts(db: Kysely<Database>, inputs: readonly ClaimInput[], fence: ClaimFence = {}): Promise<ClaimResult[]> {
  if (inputs.length === 0) return [];
  // A durable commit (durable.ts): the intent must outlive a power cut, not only a crash.
  return durableTransaction(db, (trx) => claimAttemptsIn(trx, inputs, fence));
}

/**
 * `claimAttempts` inside a transaction the caller commits durably (a group commit's
 * `durable` work, group-commit.ts, shared by every account's dial loop): the claims count
 * as made only once that commit returned, and make_call waits for it.
 */
export async function claimAttemptsIn(trx: Transaction<Database>, inputs: readonly ClaimInput[], fence: ClaimFence = {}): Promise<ClaimResult[]> {
  if (inputs.length === 0) return [];
  const live = await trx
    .selectFrom('attempts')
    .select('phone_number')
    .where('phone_number', 'in', [...new Set(inputs.map((i) => i.phoneNumber))])
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .execute();
  const busy = new Set(live.map((r) => r.phone_number));
  const results: (ClaimResult | null)[] = inputs.map(() => null);
  const claimed: { input: ClaimInput; index: number }[] = [];
  // The leads are moved a round at a time, one UPDATE per round rather than one per lead
  // (on PostgreSQL each statement is a round trip). A round takes, in input order, the
  // first input of each number and of each lead; a later input of the same number waits
  // for the next round and is tried only if the earlier one was refused, exactly as when
  // each input was claimed on its own, in order.
  let pending = inputs.map((input, index) => ({ input, index }));
  while (pending.length > 0) {
    const round: typeof pending = [];
    const later: typeof pending = [];
    const phones = new Set<string>();
    const leads = new Set<number>();
    for (const p of pending) {
      if (busy.has(p.input.phoneNumber)) {
        results[p.index] = { ok: false, reason: 'phone-live' };
      } else if (phones.has(p.input.phoneNumber) || leads.has(p.input.leadId)) {
        later.push(p);
      } else {
        phones.add(p.input.phoneNumber);
        leads.add(p.input.leadId);
        round.push(p);
      }
    }
    const moved = await claimLeads(trx, round.map((p) => p.input));
    for (const p of round) {
      if (!moved.has(p.input.leadId)) {
        results[p.index] = { ok: false, reason: 'lead-not-due' };
        continue;
      }
      busy.add(p.input.phoneNumber);
      claimed.push(p);
    }
    pending = later;
  }
  // One multi-row INSERT; the unique partial index attempts_live_phone is the final guard for rule 3.
  claimed.sort((a, b) => a.index - b.index);
  for (let i = 0; i < claimed.length; i += CLAIM_ROWS_PER_INSERT) {
    const chunk = claimed.slice(i, i + CLAIM_ROWS_PER_INSERT);
    const rows = await trx
      .insertInto('attempts')
      .values(
        chunk.map(({ input: r }) => ({
          campaign_id: r.campaignId,
          lead_id: r.leadId,
          contact_position: r.contactPosition,
          phone_number: r.phoneNumber,
          assistant_id: r.assistantId,
          state: 'dialing' as const,
          counted: 1,
          created_at: r.now,
          sent_at: r.now,
          owner: r.owner,
          fence_token: r.accountFence?.fence ?? fence.fenceToken ?? null,
          fence_account: r.accountFence?.account ?? null,
        })),
      )
      .returningAll()
      .execute();
    // A lead is claimed at most once per call, so its id names its new attempt.
    const byLead = new Map(rows.map((row) => [Number(row.lead_id), row]));
    for (const { input, index } of chunk) results[index] = { ok: true, attempt: byLead.get(input.leadId)! };
  }
  return results.map((r) => r!);
}

/** Attempts inserted per statement (11 values each: far below either database's limit of bound values). */
const CLAIM_ROWS_PER_INSERT = 200;

/** Moves the leads still due on the contact they were picked for to `calling`; returns the ids moved. */
async function claimLeads(trx: Transaction<Database>, inputs: readonly ClaimInput[]): Promise<Set<number>> {
  const moved = new Set<number>();
  // Inputs of one pass share their instant; grouped by it in case they do not.
  const byNow = new Map<number, ClaimInput[]>();
  for (const input of inputs) byNow.set(input.now, [...(byNow.get(input.now) ?? []), input]);
  for (const [now, group] of byNow) {
    for (let i = 0; i < group.length; i += CLAIM_ROWS_PER_INSERT) {
      const chunk = group.slice(i, i + CLAIM_ROWS_PER_INSERT);
      const rows = await trx
        .updateTable('leads')
        .set((eb) => ({ state: 'calling', state_reason: null, contact_attempts: eb('contact_attempts', '+', 1), updated_at: now }))
        .where('state', 'in', DUE_LEAD_STATES_SQL)
        .where((eb) => eb.or(chunk.map((c) => eb.and([eb('id', '=', c.leadId), eb('contact_position', '=', c.contactPosition)]))))
        .returning('id')
        .execute();
      for (const r of rows) moved.add(Number(r.id));
    }
  }
  return moved;
}

/**
 * Records make_call's 2xx answer (rule 6): `dialing` → `placed` with its call id; an attempt
 * a webhook ended first keeps its outcome and is only bound to its call. On PostgreSQL both
 * writes go with the next statement (pg-pipeline.ts): they are conditional, so the second
 * finds nothing to do when the first placed the attempt.
 */
export async function recordAnswer(db: Db, id: number, callId: string | null, at: number): Promise<void> {
  if (isPostgres(db)) {
    await markPlacedQuery.write(db, { id, callId, at });
    if (callId) await setCallIdQuery.write(db, { id, callId });
    return;
  }
  if (!(await markPlaced(db, id, callId, at)) && callId) await setCallId(db, id, callId);
}

/** Records a 2xx answer to make_call (rule 6): `dialing` → `placed`; false when the attempt moved on already. */
export async function markPlaced(db: Db, id: number, callId: string | null, at: number): Promise<boolean> {
  return (await markPlacedQuery.affected(db, { id, callId, at })) === 1;
}

const markPlacedQuery = prepared((db, v: { id: number; callId: string | null; at: number }) =>
  db.updateTable('attempts').set({ state: 'placed', call_id: v.callId, answered_at: v.at }).where('id', '=', v.id).where('state', '=', 'dialing'),
);

/** The final status of a call, as recorded on its attempt. */
export interface CallEnd {
  callStatus: string;
  answeredBy: string | null;
  outcome: OutcomeClass;
  source: OutcomeSource;
  endedAt: number;
}

/** Ends a live attempt with its call's outcome; false when it was not live any more. */
export async function markEnded(db: Db, id: number, end: CallEnd): Promise<boolean> {
  return (await markEndedQuery.affected(db, { id, ...end })) === 1;
}

const markEndedQuery = prepared((db, v: { id: number } & CallEnd) =>
  db
    .updateTable('attempts')
    .set({ state: 'ended', call_status: v.callStatus, answered_by: v.answeredBy, outcome: v.outcome, outcome_source: v.source, ended_at: v.endedAt, settle_deadline: null })
    .where('id', '=', v.id)
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL),
);

/**
 * `dialing` → `unknown` (rule 6): make_call may or may not have gone out (its answer was
 * lost, unreadable or not recorded, or the process died before recording it). The attempt
 * stays live, holding its number, until the call list or a webhook settles it, or
 * `settleDeadline` passes. `owner` re-labels it when a new process takes it over at
 * start-up. False when the attempt was not `dialing` any more.
 */
export async function markUnknown(db: Db, id: number, mark: { detail: string; settleDeadline: number; owner?: string }): Promise<boolean> {
  const res = await db
    .updateTable('attempts')
    .set({ state: 'unknown', detail: mark.detail, settle_deadline: mark.settleDeadline, ...(mark.owner === undefined ? {} : { owner: mark.owner }) })
    .where('id', '=', id)
    .where('state', '=', 'dialing')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Attempts still `dialing`, for start-up recovery: through the partial index of live
 * attempts (the literal list), not a scan of every attempt ever made (at 1M attempts the
 * scan alone filled the page cache at each start).
 */
export async function dialingAttempts(db: Db, ofAccount?: { account: string; olderThan: number }): Promise<Pick<AttemptRow, 'id' | 'campaign_id' | 'lead_id'>[]> {
  let query = db.selectFrom('attempts').select(['id', 'campaign_id', 'lead_id']).where('state', 'in', LIVE_ATTEMPT_STATES_SQL).where('state', '=', 'dialing');
  // Several active instances: only those claimed for the account under an older fence (left by its previous holders).
  if (ofAccount) query = query.where('fence_account', '=', ofAccount.account).where('fence_token', '<', ofAccount.olderThan);
  return query.execute();
}

/** Whether any attempt is `unknown` (the call list is then read more often: it alone can settle one). */
export async function anyUnknownAttempt(db: Db, scope?: CampaignScope): Promise<boolean> {
  if (scope?.length === 0) return false;
  const row = await scoped(db.selectFrom('attempts').select('id').where('state', '=', 'unknown'), scope).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Says on an unknown attempt why it is not settled yet; nothing when it is no longer unknown. */
export async function noteUnknownDetail(db: Db, id: number, detail: string): Promise<void> {
  await db.updateTable('attempts').set({ detail }).where('id', '=', id).where('state', '=', 'unknown').execute();
}

/** Call ids already bound to an attempt on any of `phones`, to the attempt's id: such a call is never matched to another. */
export async function callIdsBoundOnPhones(db: Db, phones: readonly string[]): Promise<Map<string, number>> {
  if (phones.length === 0) return new Map();
  const rows = await db
    .selectFrom('attempts')
    .select(['id', 'call_id'])
    .where('phone_number', 'in', phones)
    .where('call_id', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [String(r.call_id), r.id]));
}

/** A provisional webhook success confirmed by the call list: who answered, from the poll. */
export async function markProvisionalConfirmed(db: Db, id: number, answeredBy: string | null): Promise<void> {
  await provisionalConfirmedQuery.write(db, { id, answeredBy });
}

const provisionalConfirmedQuery = prepared((db, v: { id: number; answeredBy: string | null }) =>
  db.updateTable('attempts').set({ outcome_source: 'poll', answered_by: v.answeredBy }).where('id', '=', v.id),
);

/** A provisional webhook success the call list shows was a machine: the outcome becomes voicemail. */
export async function markProvisionalVoicemail(db: Db, id: number, answeredBy: string | null): Promise<void> {
  await db.updateTable('attempts').set({ outcome: 'voicemail', outcome_source: 'poll', answered_by: answeredBy }).where('id', '=', id).execute();
}

/** Attempt states that may have rung the person (rule 6: an unknown one may exist). */
const COUNTED_STATES = sql`('dialing', 'placed', 'unknown', 'ended')`;

/**
 * The times of the attempts to `phone` created after `since` that may have rung the
 * person, for the per-number caps (src/engine/caps.ts). One indexed query (attempts_phone_created).
 */
export async function countedAttemptTimes(db: Db, phone: string, since: number): Promise<Pick<AttemptRow, 'created_at' | 'answered_at' | 'ended_at'>[]> {
  return db
    .selectFrom('attempts')
    .select(['created_at', 'answered_at', 'ended_at'])
    .where('phone_number', '=', phone)
    .where('created_at', '>', since)
    .where(sql<boolean>`state in ${COUNTED_STATES}`)
    .execute();
}

/** Conditionally moves an attempt from one of `from` to `to`; true when it moved. */
export async function transitionAttempt(
  db: Db,
  id: number,
  from: readonly AttemptState[],
  to: AttemptState,
  fields: Partial<{
    call_id: string | null;
    call_status: string | null;
    answered_by: string | null;
    outcome: OutcomeClass | null;
    outcome_source: OutcomeSource | null;
    detail: string | null;
    sent_at: number | null;
    answered_at: number | null;
    ended_at: number | null;
    settle_deadline: number | null;
    counted: number;
  }> = {},
): Promise<boolean> {
  const res = await db
    .updateTable('attempts')
    .set({ ...fields, state: to })
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Records the call id of an attempt when it is learnt (answer, webhook or call list). */
export async function setCallId(db: Db, id: number, callId: string): Promise<void> {
  await setCallIdQuery.affected(db, { id, callId });
}

const setCallIdQuery = prepared((db, v: { id: number; callId: string }) =>
  db.updateTable('attempts').set({ call_id: v.callId }).where('id', '=', v.id).where('call_id', 'is', null),
);

export async function getAttempt(db: Db, id: number): Promise<AttemptRow | undefined> {
  return db.selectFrom('attempts').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The attempt a service call id is bound to, if any. `batchCallIds`: the call ids every
 * item of this group-commit batch will look up (group-commit.ts, `BatchKeys`); the first
 * lookup in the transaction reads them all in one statement, and each row found is handed
 * out once, so a second delivery of the same call in the batch reads the row again, as it
 * is after the first. A row handed out may be older than the batch's earlier items' writes
 * to it (a make_call answer of the same attempt): the outcome's writes are conditional on
 * the row's state (outcomes.ts). A call id the batch read did not find is looked up alone.
 */
export async function attemptByCallId(db: Db, callId: string, batchCallIds?: () => readonly string[]): Promise<AttemptRow | undefined> {
  if (batchCallIds && db.isTransaction) {
    let read = batchReads.get(db);
    if (!read) {
      // A batch of one reads alone, as without a batch.
      const ids = batchCallIds();
      batchReads.set(db, (read = ids.length > 1 ? await attemptsByCallIds(db, ids) : new Map()));
      // Their outcomes decide each attempt's lead next: read those together too.
      await readLeadsAhead(db, [...read.values()].map((a) => a.lead_id));
    }
    const row = read.get(callId);
    if (row) {
      read.delete(callId);
      return row;
    }
  }
  return (await attemptByCallIdQuery.rows(db, { callId }))[0];
}

/** What a transaction read of its batch's call ids and has not handed out yet. */
const batchReads = new WeakMap<Db, Map<string, AttemptRow>>();

/** The newest attempt of each call id: one statement, one array parameter (a JSON list on SQLite, as key-lists.ts says). */
async function attemptsByCallIds(db: Db, callIds: readonly string[]): Promise<Map<string, AttemptRow>> {
  const found = new Map<string, AttemptRow>();
  const keys = [...new Set(callIds)];
  const rows = isPostgres(db) ? await attemptsByCallIdsPg.rows(db, { keys }) : await attemptsByCallIdsSqlite.rows(db, { keys: JSON.stringify(keys) });
  // A call id bound twice (it should not be) gives its latest attempt, as alone.
  for (const row of rows) {
    if (row.call_id === null) continue;
    const kept = found.get(row.call_id);
    if (!kept || Number(kept.id) < Number(row.id)) found.set(row.call_id, row);
  }
  return found;
}

const attemptsByCallIdsPg = prepared(
  (db, v: { keys: string[] }) => db.selectFrom('attempts').selectAll().where('call_id', '=', sql<string>`any(${v.keys}::text[])`),
  { planEachRun: true },
);
const attemptsByCallIdsSqlite = prepared((db, v: { keys: string }) =>
  db.selectFrom('attempts').selectAll().where('call_id', 'in', sql<string>`(select value from json_each(${v.keys}))`),
);

const attemptByCallIdQuery = prepared((db, v: { callId: string }) =>
  db.selectFrom('attempts').selectAll().where('call_id', '=', v.callId).orderBy('id', 'desc').limit(1),
);

/** The live attempt on a phone number (unique by rule 3). */
export async function liveAttemptByPhone(db: Db, phone: string): Promise<AttemptRow | undefined> {
  return (await liveAttemptByPhoneQuery.rows(db, { phone }))[0];
}

const liveAttemptByPhoneQuery = prepared((db, v: { phone: string }) =>
  db.selectFrom('attempts').selectAll().where('phone_number', '=', v.phone).where('state', 'in', LIVE_ATTEMPT_STATES_SQL).limit(1),
);

/**
 * Ended attempts whose success came from a webhook without `answered_by`, awaiting a
 * poll: the newest `limit` of them. Bounded, because a backlog (a daemon upgraded from a
 * version that gave up on them, or one stopped for hours) can hold a hundred thousand.
 */
export async function unconfirmedAttempts(db: Db, since: number, limit: number, scope?: CampaignScope): Promise<AttemptRow[]> {
  if (scope?.length === 0) return [];
  return scoped(provisional(db.selectFrom('attempts').selectAll()), scope).where('ended_at', '>=', since).orderBy('ended_at', 'desc').limit(limit).execute();
}

/**
 * How many webhook successes await a poll (counted up to `cap`), and when the oldest of
 * them ended: what the poller needs to decide when to confirm them.
 */
export async function unconfirmedSummary(db: Db, since: number, cap: number, scope?: CampaignScope): Promise<{ count: number; oldestEndedAt: number | null }> {
  if (scope?.length === 0) return { count: 0, oldestEndedAt: null };
  const rows = await scoped(provisional(db.selectFrom('attempts').select('ended_at')), scope).where('ended_at', '>=', since).orderBy('ended_at', 'asc').limit(cap).execute();
  const oldest = rows[0]?.ended_at;
  return { count: rows.length, oldestEndedAt: oldest === undefined || oldest === null ? null : Number(oldest) };
}

/**
 * Webhook successes awaiting the call list's word (status `confirming`), per campaign id
 * (of the scope's campaigns). Each account's poller reports its own: counting every
 * campaign's for each of 200 accounts read every waiting success 200 times, seconds of
 * the daemon's one thread when all of them waited for a listing at once.
 */
export async function unconfirmedCountsByCampaign(db: Db, since: number, scope?: CampaignScope): Promise<Map<number, number>> {
  if (scope?.length === 0) return new Map();
  const rows = await scoped(provisional(db.selectFrom('attempts').select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])), scope)
    .where('ended_at', '>=', since)
    .groupBy('campaign_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.campaign_id), Number(r.n)]));
}

/** When a campaign's newest webhook success still awaiting a poll ended (it may yet be a voicemail, to retry); null when none. */
export async function newestUnconfirmedSuccess(db: Db, campaignId: number, since: number): Promise<number | null> {
  const row = await provisional(db.selectFrom('attempts').select((eb) => eb.fn.max('ended_at').as('at')))
    .where('campaign_id', '=', campaignId)
    .where('ended_at', '>=', since)
    .executeTakeFirst();
  return row?.at == null ? null : Number(row.at);
}

/**
 * A provisional success that a complete call listing did not show: nothing will ever
 * say who answered, so the webhook's success stands. False when it was confirmed meanwhile.
 */
export async function finaliseUnconfirmed(db: Db, id: number): Promise<boolean> {
  const res = await db.updateTable('attempts').set({ outcome_source: 'webhook-final' }).where('id', '=', id).where('state', '=', 'ended').where('outcome_source', '=', 'webhook').executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Narrows a query of attempts to provisional successes, with the literals of the partial index attempts_provisional. */
function provisional<QB extends SelectQueryBuilder<Database, 'attempts', object>>(query: QB): QB {
  return query.where('state', '=', sql.lit('ended')).where('outcome_source', '=', sql.lit('webhook')).where('outcome', '=', sql.lit('success')) as QB;
}

/** Counts attempts of a lead's contact that used up budget (for explain and checks). */
export async function attemptsOfLead(db: Db, leadId: number): Promise<AttemptRow[]> {
  return db.selectFrom('attempts').selectAll().where('lead_id', '=', leadId).orderBy('id').execute();
}

/** How many of a lead's attempts count (placed, or may have been): a claimed attempt's number on its lead. */
export async function countedAttempts(db: Db, leadId: number): Promise<number> {
  const row = await db
    .selectFrom('attempts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('lead_id', '=', leadId)
    .where('counted', '=', 1)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

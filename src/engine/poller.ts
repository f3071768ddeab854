import { DateTime } from 'luxon';
import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { recordEvent } from '../store/events.js';
import type { AttemptRow, Database } from '../store/types.js';
import { callIdsBoundOnPhones, listLiveAttempts, noteUnknownDetail, transitionAttempt, unconfirmedAttempts } from '../store/attempts.js';
import { leadBackUncounted } from '../store/lead-transitions.js';
import { couldBeUnderZoneDoubt, createdAfterSend, SETTLE_HELD_PREFIX, ZONE_DOUBT_MS } from './call-time.js';
import { closeStuckAttempt, finaliseProvisional, observeCall, type OutcomeContext } from './outcomes.js';
import { applyOptOut } from './opt-out.js';
import { normaliseServicePhone } from './phone-match.js';
import type { CallSummary, EngineClient } from './ports.js';

// Follows live calls through GET /api/user/calls. One listing per assistant per round,
// not one per call, so the cost does not grow with the number of live calls; the
// listing stops at the first page that accounts for every attempt it looks for.

/**
 * Webhook successes looked for in one round, newest first: each is a row in memory and a
 * reason to page further; a backlog is worked through round by round.
 */
export const PROVISIONAL_PER_ROUND = 500;

export interface PollerOptions {
  /** Allowance for the service's clock running behind ours when matching created_at. */
  clockSkewMs: number;
  /** Grace after the assistant's maximum duration before a call counts as stuck. */
  stuckGraceMs: number;
  /** Used when the assistant's max_duration is not known. */
  defaultMaxDurationSeconds: number;
  serverTimezone: string;
  /** How far back a webhook-only success is still looked for in the call list (a restart after a long stop included). */
  confirmWindowMs: number;
}

export interface PollerDeps extends OutcomeContext {
  client: EngineClient;
  logger: Logger;
  maxDurationSeconds: (assistantId: number) => number | null;
  /** Told when a call could be an attempt's only if the service's zone is not api.server_timezone. */
  onZoneDoubt?: (detail: string) => void;
  /** What listings showed of the call list's order, per assistant, kept from round to round (see `pastEveryTarget`). */
  listOrder?: Map<number, ListOrder>;
  /** Whether a campaign's calls are this poller's (its account's); absent: every campaign's. */
  owns?: (campaignId: number) => boolean;
  /** The same as campaign ids, read by the store itself (CampaignScope); absent: every campaign's. */
  scope?: () => readonly number[] | undefined;
}

/**
 * The order of an assistant's call list as listings showed it. The spec does not say it;
 * once a listing read to its end over two pages or more showed ids and creation times
 * falling all along (newest first), a later listing may stop at the page past every call it
 * looks for. One listing that shows anything else turns that off for good.
 */
export interface ListOrder {
  newestFirst: boolean;
  broken: boolean;
}

export interface PollRound {
  /** When the round began: calls it saw in progress were live then. */
  startedAt: number;
  requests: number;
  matched: number;
  settled: number;
  stuck: number;
  /** Provisional webhook successes a complete listing did not show (their success stands). */
  finalised: number;
  /** Attempts a listing showed still in progress. */
  inProgress: number[];
  /** Attempts this round saw ended, with the instant the listing that showed it came back (for the duration estimate). */
  ended: { attemptId: number; assistantId: number; sentAt: number; seenAt: number }[];
  /** Listings that failed (the round is retried later). */
  failed: number;
  /** True when more provisional successes wait than one round takes: the next round should follow at once. */
  backlog: boolean;
  /** A listing was refused for the token (401, 403, a redirect): dialing must stop, as a refused make_call stops it. */
  tokenRejected?: boolean;
}

interface Target {
  attempt: AttemptRow;
  matched: boolean;
  /** An unbound call to the number that is this attempt's if the service's zone is not the configured one. */
  doubt?: CallSummary;
}

/** Runs one polling round over every live (and provisionally ended) attempt. */
export async function pollOnce(deps: PollerDeps, opts: PollerOptions): Promise<PollRound> {
  const startedAt = deps.now();
  const round: PollRound = { startedAt, requests: 0, matched: 0, settled: 0, stuck: 0, finalised: 0, failed: 0, inProgress: [], ended: [], backlog: false };
  // Only this engine's account's calls: another account's are not in this token's call list.
  const mine = (a: AttemptRow): boolean => deps.owns?.(a.campaign_id) ?? true;
  const scope = deps.scope?.();
  const live = (await listLiveAttempts(deps.db, scope)).filter(mine);
  const provisional = (await unconfirmedAttempts(deps.db, startedAt - opts.confirmWindowMs, PROVISIONAL_PER_ROUND, scope)).filter(mine);
  round.backlog = provisional.length >= PROVISIONAL_PER_ROUND;
  // Attempts whose make_call is still in flight are left to their answer.
  const targets = [...live.filter((a) => a.state !== 'dialing'), ...provisional];
  const byAssistant = new Map<number, Target[]>();
  for (const attempt of targets) {
    const list = byAssistant.get(attempt.assistant_id) ?? [];
    list.push({ attempt, matched: false });
    byAssistant.set(attempt.assistant_id, list);
  }

  const listed = new Set<number>();
  for (const [assistantId, list] of byAssistant) {
    const complete = await pollAssistant(deps, opts, assistantId, list, round);
    if (!complete) continue;
    listed.add(assistantId);
    round.settled += await settleUnmatched(deps, list, startedAt);
    round.finalised += await finaliseUnlisted(deps, list);
  }
  // Judged at the round's start, not after the listing: a call the listing showed in
  // progress is stuck only if it was still in progress past its limit. A clock that
  // jumped while the listing was in flight (a suspended host or VM) would otherwise
  // close calls whose webhook was on its way, and lose their outcome. Only calls whose
  // assistant was listed this round: a failed listing says nothing about them, and
  // closing on the clock alone lost outcomes on a loaded machine.
  round.stuck += await closeStuck(deps, opts, live.filter((a) => listed.has(a.assistant_id)), startedAt);
  return round;
}

async function pollAssistant(deps: PollerDeps, opts: PollerOptions, assistantId: number, targets: Target[], round: PollRound): Promise<boolean> {
  const oldest = Math.min(...targets.map((t) => t.attempt.sent_at ?? t.attempt.created_at));
  // From far enough back that a call whose zone-less time reads hours early (a wrong
  // api.server_timezone) is still in the listing, where settling can see it.
  const dateFrom = DateTime.fromMillis(oldest - opts.clockSkewMs - ZONE_DOUBT_MS, { zone: opts.serverTimezone }).toISODate() ?? '1970-01-01';
  const byPhone = new Map<string, Target[]>();
  for (const t of targets) {
    const list = byPhone.get(t.attempt.phone_number) ?? [];
    list.push(t);
    byPhone.set(t.attempt.phone_number, list);
  }
  const observations: { target: Target; call: CallSummary; seenAt: number }[] = [];
  const boundIds = await boundCallIds(deps.db, targets);
  const order = deps.listOrder?.get(assistantId) ?? { newestFirst: false, broken: false };
  const seen = { pages: 0, monotone: true, lastId: Number.POSITIVE_INFINITY, lastCreated: Number.POSITIVE_INFINITY, stopped: false };
  try {
    await deps.client.listCallsSince(assistantId, dateFrom, (calls) => {
      round.requests++;
      seen.pages++;
      const seenAt = deps.now();
      for (const call of calls) {
        const id = Number(call.id);
        if (!Number.isSafeInteger(id) || call.createdAt === null || id >= seen.lastId || call.createdAt > seen.lastCreated) seen.monotone = false;
        seen.lastId = id;
        seen.lastCreated = call.createdAt ?? Number.NEGATIVE_INFINITY;
        const candidates = byPhone.get(normaliseServicePhone(call.clientPhoneNumber));
        if (!candidates) continue;
        const target = pickTarget(candidates, call, boundIds, opts.clockSkewMs);
        if (!target) continue;
        target.matched = true;
        observations.push({ target, call, seenAt });
      }
      // Stop paging once all are found, or once the list, newest first, is past every one.
      seen.stopped = targets.every((t) => t.matched) || (order.newestFirst && !order.broken && seen.monotone && calls.length > 0 && pastEveryTarget(targets, seen, opts.clockSkewMs));
      return seen.stopped;
    });
    if (!seen.monotone) order.broken = true;
    else if (!seen.stopped && seen.pages >= 2) order.newestFirst = true;
    deps.listOrder?.set(assistantId, order);
  } catch (err) {
    deps.logger.warn({ err: errText(err), assistantId }, 'polling the call list failed; will retry');
    round.failed++;
    if ((err as { kind?: string }).kind === 'token-rejected') round.tokenRejected = true;
    return false;
  }
  // All of a listing's observations are queued at once, so the group commit applies them
  // in few transactions, in this order; awaited one by one, each paid a commit of its own.
  // In the background: a listing is the slow backstop of webhooks, and its confirmations
  // must not hold the webhooks and claims that keep the slots busy.
  const results = await Promise.all(
    observations.map(({ target, call }) =>
      observeCall(
        deps,
        target.attempt,
        {
          callId: call.id,
          status: call.status,
          answeredBy: call.answeredBy ?? null,
          endedAt: null,
          source: 'poll',
          given: call.given,
        },
        { background: true },
      ),
    ),
  );
  for (const [i, { target, call, seenAt }] of observations.entries()) {
    const { attempt } = target;
    const result = results[i]!;
    if (result !== 'ignored') round.matched++;
    // Opt-outs (docs/design.md §11): the call list carries the extracted variables too (a lost webhook).
    await applyOptOut(deps, attempt, call.given?.extracted_variables);
    // What the poll plan learns call durations from (engine.ts, poll-plan.ts).
    if (result === 'progress') round.inProgress.push(attempt.id);
    if (result === 'ended') round.ended.push({ attemptId: attempt.id, assistantId, sentAt: attempt.answered_at ?? attempt.sent_at ?? attempt.created_at, seenAt });
  }
  return true;
}

/**
 * Whether a newest-first list, read down to a call with id `lastId` created at
 * `lastCreated`, can still hold a call of an unmatched target: one bound to a call id
 * waits for that id; any other for a call created after it was sent (less the skew), as
 * matching requires. An unknown attempt always waits for the whole list: only a complete
 * listing may settle it as never placed, and it looks hours back for a zone mistake.
 */
function pastEveryTarget(targets: Target[], seen: { lastId: number; lastCreated: number }, skewMs: number): boolean {
  for (const t of targets) {
    if (t.matched) continue;
    const a = t.attempt;
    if (a.state === 'unknown') return false;
    const bound = a.call_id === null ? Number.NaN : Number(a.call_id);
    if (Number.isSafeInteger(bound) ? seen.lastId >= bound : seen.lastCreated >= (a.sent_at ?? a.created_at) - skewMs) return false;
  }
  return true;
}

/**
 * The call that belongs to an attempt: the same call id when known, else the earliest
 * call to that number created no earlier than the attempt was sent (less the skew) and
 * not already bound to another attempt. Rule 3 makes this unique.
 */
function pickTarget(candidates: Target[], call: CallSummary, bound: Map<string, number>, skewMs: number): Target | undefined {
  for (const t of candidates) {
    if (t.attempt.call_id) {
      if (t.attempt.call_id === call.id) return t;
      continue;
    }
    const owner = bound.get(call.id);
    if (owner !== undefined && owner !== t.attempt.id) continue;
    const sentAt = t.attempt.sent_at ?? t.attempt.created_at;
    if (!createdAfterSend(call.createdAt, sentAt, skewMs)) {
      if (owner === undefined && couldBeUnderZoneDoubt(call.createdAt, sentAt, skewMs)) t.doubt ??= call;
      continue;
    }
    return t;
  }
  return undefined;
}

async function boundCallIds(db: Kysely<Database>, targets: Target[]): Promise<Map<string, number>> {
  return callIdsBoundOnPhones(db, [...new Set(targets.map((t) => t.attempt.phone_number))]);
}

/** Unknown attempts past their settle deadline with no call in a complete listing: never placed. */
async function settleUnmatched(deps: PollerDeps, targets: Target[], listedAt: number): Promise<number> {
  let settled = 0;
  for (const { attempt, matched, doubt } of targets) {
    if (matched || attempt.state !== 'unknown') continue;
    if (attempt.settle_deadline === null || attempt.settle_deadline > listedAt) continue;
    if (doubt) {
      await withholdSettle(deps, attempt, doubt);
      continue;
    }
    const now = deps.now();
    const done = await deps.db.transaction().execute(async (trx) => {
      const moved = await transitionAttempt(trx, attempt.id, ['unknown'], 'never-placed', {
        outcome: 'never-placed',
        outcome_source: 'settle',
        counted: 0,
        ended_at: now,
        settle_deadline: null,
      });
      if (moved) await leadBackUncounted(trx, attempt, now, 'previous attempt was never placed', now);
      return moved;
    });
    if (done) {
      settled++;
      await recordEvent(deps.db, { at: now, campaignId: attempt.campaign_id, leadId: attempt.lead_id, attemptId: attempt.id, kind: 'settled-never-placed' });
      deps.logger.info({ attempt: attempt.id }, 'unknown attempt settled as never placed');
      deps.onSlotFreed(attempt.campaign_id);
    }
  }
  return settled;
}

/**
 * An unknown attempt is never settled as never placed while the listing holds a call to
 * its number that is its own if the service's times are in another zone than
 * api.server_timezone says: dialling again could call the person twice. It stays
 * unknown (live, holding its number) and says why, until the call list or a webhook
 * settles it, as they will once the zone is right.
 */
async function withholdSettle(deps: PollerDeps, attempt: AttemptRow, doubt: CallSummary): Promise<void> {
  const detail = `${SETTLE_HELD_PREFIX} call ${doubt.id} to this number could be this attempt's if the service's timestamps are not in api.server_timezone`;
  deps.onZoneDoubt?.(`unknown attempt ${attempt.id}: ${detail}`);
  if (attempt.detail === detail) return;
  await noteUnknownDetail(deps.db, attempt.id, detail);
  deps.logger.warn({ attempt: attempt.id, callId: doubt.id }, 'unknown attempt not settled: a call to its number may be its own under another server zone');
}

/**
 * Webhook successes still provisional after a complete listing that did not show their
 * call: no poll will ever say who answered, so the webhook's success becomes final
 * instead of being looked for (page after page) at every round.
 */
async function finaliseUnlisted(deps: PollerDeps, targets: Target[]): Promise<number> {
  let finalised = 0;
  for (const { attempt, matched } of targets) {
    if (matched || attempt.state !== 'ended') continue;
    if (await finaliseProvisional(deps, attempt)) finalised++;
  }
  if (finalised > 0) deps.logger.info({ count: finalised }, 'webhook successes not found in a complete call listing are kept as successes');
  return finalised;
}

async function closeStuck(deps: PollerDeps, opts: PollerOptions, live: AttemptRow[], listedAt: number): Promise<number> {
  let closed = 0;
  for (const attempt of live) {
    if (attempt.state !== 'placed') continue;
    const max = deps.maxDurationSeconds(attempt.assistant_id) ?? opts.defaultMaxDurationSeconds;
    // From the 2xx answer, which came after the call was created: sent_at is the intent's
    // instant, and a make_call can wait minutes for the rate budget after it.
    const limit = (attempt.answered_at ?? attempt.sent_at ?? attempt.created_at) + max * 1000 + opts.stuckGraceMs;
    if (listedAt < limit) continue;
    if (await closeStuckAttempt(deps, attempt, `still in progress after ${max} s + grace`)) closed++;
  }
  return closed;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

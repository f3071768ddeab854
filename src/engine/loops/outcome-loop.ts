import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { Database } from '../../store/types.js';
import { anyUnknownAttempt, listLiveAttempts, oldestPlacedAt, unconfirmedCountsByCampaign, unconfirmedSummary } from '../../store/attempts.js';
import type { CampaignView } from '../campaign-view.js';
import { errText, type EngineLoop, type EngineMetrics, type PollNudge } from '../engine-types.js';
import type { OutcomeContext } from '../outcomes.js';
import { afterFailedRounds, backstopPollAt, confirmationDueAt, webhooksHealthy } from '../planner.js';
import { nextPollAt, recordSample, type DurationSample } from '../poll-plan.js';
import {
  CALL_OVERDUE_MS,
  CONFIRM_BATCH,
  CONFIRM_WAIT_MS,
  CONFIRM_WINDOW_MS,
  MAX_SLEEP_MS,
  POLL_AWAITING_WEBHOOKS_MS,
  POLL_BACKSTOP_MS,
  POLL_LEARNING_MS,
  POLL_MAX_GAP_MS,
  POLL_MIN_GAP_MS,
  POLL_OVERDUE_MS,
  POLL_PER_CALL,
  POLL_UNKNOWN_MS,
  TOKEN_PROBE_MS,
  WEBHOOKS_HEALTHY_MS,
} from '../policy.js';
import { pollOnce, type ListOrder, type PollerOptions, type PollRound } from '../poller.js';
import type { EngineClient } from '../ports.js';
import type { ServiceState } from '../service-state.js';
import { WAKE } from '../wake-signal.js';

// The outcome loop: reads the call list to learn how calls ended, to settle unknown
// attempts (rule 6), to close stuck calls and to confirm webhook successes. One listing
// per assistant serves all of these at once, which is why settling is not a loop of its
// own: a second reader would double the requests. While the token is rejected it only
// probes, to notice the token works again.

export interface OutcomeLoopDeps {
  db: Kysely<Database>;
  client: EngineClient;
  clock: Clock;
  logger: Logger;
  metrics?: EngineMetrics | undefined;
  campaigns: CampaignView;
  service: ServiceState;
  /** What applying an observation needs (shared with the webhook path). */
  outcomes: OutcomeContext;
  poller: PollerOptions;
  onZoneDoubt: (detail: string) => void;
  /** Rings the dial loop: a slot may have freed, or dialing may resume. */
  wakeDial: () => void;
  webhooks: { enabled: boolean; lastAt: () => number };
  /** A fixed poll interval when webhooks are not arriving, instead of the adaptive plan (poll-plan.ts); and when they are (a backstop). */
  pollIntervalMs?: number | undefined;
  pollIntervalWithWebhooksMs?: number | undefined;
  /** Webhook successes waiting that make a listing due (default CONFIRM_BATCH; per account: confirmBatchOf). */
  confirmBatch?: number;
}

export type OutcomeLoop = EngineLoop & PollNudge;

export function createOutcomeLoop(deps: OutcomeLoopDeps): OutcomeLoop {
  const { db, client, clock, campaigns, service } = deps;
  const log = deps.logger;
  let stopping = false;
  let running: Promise<void> = Promise.resolve();
  let wake = new AbortController();
  let lastPollAt = Number.NEGATIVE_INFINITY;
  /** A poll is wanted at once (an unknown attempt, a reload); a mere re-plan leaves it false. */
  let urgent = false;
  /** Whether the current wait follows the plan, which a newly placed call changes. */
  let planned = false;
  /** What listings taught about call durations, per assistant (poll-plan.ts). */
  const durationSamples = new Map<number, DurationSample[]>();
  /** What listings showed of each assistant's call-list order (poller.ts ListOrder). */
  const listOrder = new Map<number, ListOrder>();
  /** Attempt id → start of the last round whose listing showed its call in progress. */
  const seenLiveAt = new Map<number, number>();
  /** Rounds in a row whose listing failed: the next waits longer each time (up to a minute). */
  let failedRounds = 0;

  function wakeUrgent(): void {
    urgent = true;
    wake.abort(WAKE);
  }

  /**
   * When to list calls next (an instant). Without webhooks the call list is how calls
   * end, so it is read when calls have probably ended (poll-plan.ts). While webhooks
   * arrive it is a backstop: for a webhook that was lost (a call live for longer than
   * calls take) and to confirm webhook successes, which carry no answered_by; a slow
   * cadence does both at a fraction of a request per call.
   */
  async function nextPollTime(): Promise<number> {
    planned = false;
    await reportConfirming();
    const at = await pollTimeByState();
    return afterFailedRounds(at, failedRounds, { lastPollAt, minGapMs: POLL_MIN_GAP_MS, maxGapMs: POLL_MAX_GAP_MS });
  }

  async function pollTimeByState(): Promise<number> {
    if (service.tokenRejected()) return lastPollAt + TOKEN_PROBE_MS;
    if (await anyUnknownAttempt(db, campaigns.scope())) return lastPollAt + POLL_UNKNOWN_MS;
    const now = clock.now();
    const batch = deps.confirmBatch ?? CONFIRM_BATCH;
    const waiting = await unconfirmedSummary(db, now - CONFIRM_WINDOW_MS, batch, campaigns.scope());
    const confirmAt = confirmationDueAt(waiting, { lastPollAt, minGapMs: POLL_MIN_GAP_MS, batch, waitMs: CONFIRM_WAIT_MS });
    if (!webhooksHealthy({ enabled: deps.webhooks.enabled, lastWebhookAt: deps.webhooks.lastAt(), now, healthyMs: WEBHOOKS_HEALTHY_MS })) {
      if (deps.pollIntervalMs !== undefined) return lastPollAt + deps.pollIntervalMs;
      return Math.min(confirmAt, await plannedPoll(now));
    }
    const backstop = backstopPollAt({
      lastPollAt,
      backstopMs: deps.pollIntervalWithWebhooksMs ?? POLL_BACKSTOP_MS,
      oldestPlacedAt: await oldestPlacedAt(db, campaigns.scope()),
      overdueMs: CALL_OVERDUE_MS,
      overdueRetryMs: POLL_OVERDUE_MS,
    });
    return Math.min(confirmAt, backstop);
  }

  /** Refreshes the `confirming` gauge; planning runs at least every 30 s and after each round. */
  async function reportConfirming(): Promise<void> {
    if (!deps.metrics?.confirming) return;
    const counts = await unconfirmedCountsByCampaign(db, 0, campaigns.scope());
    for (const c of campaigns.values()) deps.metrics.confirming(c.name, counts.get(c.id) ?? 0);
  }

  /** The adaptive plan over the calls in progress. */
  async function plannedPoll(now: number): Promise<number> {
    const placed = (await listLiveAttempts(db, campaigns.scope())).filter((a) => a.state === 'placed');
    const ids = new Set(placed.map((a) => a.id));
    for (const id of seenLiveAt.keys()) if (!ids.has(id)) seenLiveAt.delete(id);
    const live = placed.map((a) => {
      const sentAt = a.answered_at ?? a.sent_at ?? a.created_at;
      return { assistantId: a.assistant_id, sentAt, aliveAt: Math.max(sentAt, seenLiveAt.get(a.id) ?? sentAt) };
    });
    planned = true;
    return nextPollAt({
      now,
      lastPollAt,
      live,
      samples: (id) => durationSamples.get(id) ?? [],
      ...(client.budgetHeadroom ? { headroom: client.budgetHeadroom() } : {}),
      pollsPerCall: POLL_PER_CALL,
      minGapMs: POLL_MIN_GAP_MS,
      maxGapMs: POLL_MAX_GAP_MS,
      learningGapMs: deps.webhooks.enabled && deps.webhooks.lastAt() === Number.NEGATIVE_INFINITY ? POLL_AWAITING_WEBHOOKS_MS : POLL_LEARNING_MS,
    });
  }

  /** What a round showed of call durations: ended between the last look that saw it live and this one. */
  function learnDurations(round: PollRound): void {
    for (const id of round.inProgress) seenLiveAt.set(id, round.startedAt);
    for (const e of round.ended) {
      const alive = Math.max(e.sentAt, seenLiveAt.get(e.attemptId) ?? e.sentAt);
      seenLiveAt.delete(e.attemptId);
      let list = durationSamples.get(e.assistantId);
      if (!list) durationSamples.set(e.assistantId, (list = []));
      recordSample(list, { lo: alive - e.sentAt, hi: Math.max(alive, e.seenAt) - e.sentAt });
    }
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      urgent = false;
      try {
        if (!service.tokenRejected()) {
          lastPollAt = clock.now();
          const round = await pollOnce(
            { ...deps.outcomes, client, maxDurationSeconds: (id) => service.maxDuration(id), onZoneDoubt: deps.onZoneDoubt, listOrder, owns: (id) => campaigns.owns(id), scope: () => campaigns.scope() },
            deps.poller,
          );
          if (round.requests > 0 || round.settled > 0) log.debug({ requests: round.requests, matched: round.matched, settled: round.settled, stuck: round.stuck, finalised: round.finalised }, 'poll round');
          // With every slot live no make_call is sent, so a refused listing is what tells.
          if (round.tokenRejected) service.tokenRefused();
          learnDurations(round);
          failedRounds = round.failed > 0 ? failedRounds + 1 : 0;
          // Confirmed or finalised successes may be what a campaign's completion waited for.
          if (round.matched > 0 || round.finalised > 0) deps.wakeDial();
          // More webhook successes wait than one round takes: the next round follows at once.
          if (round.backlog && round.matched + round.finalised > 0) urgent = true;
        } else {
          lastPollAt = clock.now();
          if (await service.probe()) deps.wakeDial();
        }
      } catch (err) {
        log.warn({ err: errText(err) }, 'poll round failed');
      }
      await waitForNextPoll();
    }
  }

  /**
   * Sleeps until the next poll, in steps of at most 30 s so suspend and clock jumps heal,
   * planning again after each step and whenever a call is placed; an urgent wake-up (an
   * unknown attempt, a reload, a backlog) ends the wait.
   */
  async function waitForNextPoll(): Promise<void> {
    while (!stopping && !urgent) {
      const signal = wake.signal;
      let until: number;
      try {
        until = await nextPollTime();
      } catch (err) {
        log.warn({ err: errText(err) }, 'could not plan the next poll');
        until = clock.now() + POLL_UNKNOWN_MS;
      }
      const now = clock.now();
      if (until <= now) break;
      if (!signal.aborted) await clock.sleep(Math.min(MAX_SLEEP_MS, until - now), signal);
      if (signal.aborted) wake = new AbortController();
      if (clock.now() >= until) break;
    }
    planned = false;
    wake = new AbortController();
  }

  return {
    start() {
      stopping = false;
      running = loop();
    },
    stop() {
      stopping = true;
      wakeUrgent();
    },
    done: () => running,
    lastPollAt: () => lastPollAt,
    urgent: wakeUrgent,
    replan() {
      if (planned) wake.abort(WAKE);
    },
  };
}

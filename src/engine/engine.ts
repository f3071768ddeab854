import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { isOpen, nextOpening } from '../time/window.js';
import { createGroupCommit } from '../store/group-commit.js';
import type { ApiStatus, Database } from '../store/types.js';
import { anyUnknownAttempt, claimAttempts, listLiveAttempts, liveCountsByCampaign, newestUnconfirmedSuccess, markUnknown, oldestPlacedAt, unconfirmedCountsByCampaign, unconfirmedSummary, type ClaimInput } from '../store/attempts.js';
import { campaignControlRows, completeRunningCampaign, reopenCompletedCampaign, setCampaignProblem } from '../store/campaigns.js';
import { deferLead, dueLeads, hasActiveLeads, hasLeads, nextDueAt, suppressLead, type DueLead } from '../store/due-leads.js';
import { suppressedNumbers } from '../store/suppressions.js';
import { dial, type DialReport } from './dialer.js';
import { nextPollAt, recordSample, type DurationSample } from './poll-plan.js';
import {
  ACCOUNT_PAUSE_MS,
  CALL_OVERDUE_MS,
  CANDIDATE_MARGIN,
  CLOCK_SKEW_MS,
  CONFIRM_BATCH,
  CONFIRM_WAIT_MS,
  CONFIRM_WINDOW_MS,
  CONTROL_CHECK_MS,
  DEFAULT_MAX_DURATION_SECONDS,
  MAX_SLEEP_MS,
  PHONE_BUSY_DEFER_MS,
  POLL_AWAITING_WEBHOOKS_MS,
  POLL_BACKSTOP_MS,
  POLL_LEARNING_MS,
  POLL_MAX_GAP_MS,
  POLL_MIN_GAP_MS,
  POLL_OVERDUE_MS,
  POLL_PER_CALL,
  POLL_UNKNOWN_MS,
  REMOTE_FOLLOW_MS,
  STORE_RETRY_MS,
  STORE_RETRY_TRIES,
  STUCK_GRACE_MS,
  TOKEN_PROBE_MS,
  WEBHOOKS_HEALTHY_MS,
  ZONE_WARNING_EVERY_MS,
} from './policy.js';
import { pollOnce, type ListOrder, type PollerOptions, type PollRound } from './poller.js';
import type { EngineClient } from './ports.js';
import { recoverUnfinishedAttempts } from './recovery.js';
import { followRemoteCampaigns } from './remote-campaigns.js';
import { loadRuntimeCampaigns, type RuntimeCampaign } from './runtime-campaign.js';
import { handleWebhookPayload, type WebhookResult } from './webhook.js';
import { deferHeld, personHold } from './person-hold.js';

// The scheduler. One loop claims due leads into free slots and hands each claimed
// attempt to the dialer; a second loop follows live calls through the call list.
// Both sleep until something can change (a slot frees, a lead falls due, a window
// opens, a poll is due), never longer than 30 s, so suspend and clock jumps heal.

/** The narrow set of counters the engine reports to. */
export interface EngineMetrics {
  callPlaced(campaign: string): void;
  outcome(campaign: string, outcomeClass: string): void;
  liveCalls(campaign: string, n: number): void;
  /** Completed leads whose webhook success awaits the call list (status `confirming`). */
  confirming?(campaign: string, n: number): void;
  unknownAttempt(): void;
}

export interface EngineOptions {
  db: Kysely<Database>;
  client: EngineClient;
  clock: Clock;
  logger: Logger;
  metrics?: EngineMetrics;
  /** Identifies this daemon's in-flight attempts. */
  instanceId: string;
  /** Account-wide cap over all campaigns (daemon max_calls_in_parallel). */
  accountMaxCalls?: number;
  settleSeconds: number;
  serverTimezone: string;
  /** A fixed poll interval when webhooks are not arriving, instead of the adaptive plan (poll-plan.ts); and when they are (a backstop). */
  pollIntervalMs?: number;
  pollIntervalWithWebhooksMs?: number;
  /** Whether the webhook endpoint can accept deliveries at all (a secret is set). */
  webhooksEnabled?: boolean;
  /** Poll tuning; defaults suit the live service. */
  poller?: Partial<PollerOptions>;
  /** results.keep_transcripts of the daemon config (default true). */
  keepTranscripts?: boolean;
}

export interface EngineStatus {
  api: ApiStatus;
  apiDetail: string | null;
}

const WAKE = 'wake';

/** Creates the engine; nothing runs until `start()`. */
export function createEngine(opts: EngineOptions) {
  const { db, client, clock, logger } = opts;
  const log = logger.child({ component: 'engine' });
  const settleMs = opts.settleSeconds * 1000;
  const pollerOptions: PollerOptions = {
    clockSkewMs: CLOCK_SKEW_MS,
    stuckGraceMs: STUCK_GRACE_MS,
    defaultMaxDurationSeconds: DEFAULT_MAX_DURATION_SECONDS,
    serverTimezone: opts.serverTimezone,
    confirmWindowMs: CONFIRM_WINDOW_MS,
    ...opts.poller,
  };

  let campaigns = new Map<number, RuntimeCampaign>();
  let campaignsVersion = '';
  let suppressed = new Set<string>();
  const maxDurations = new Map<number, number | null>();
  const inflight = new Set<Promise<DialReport>>();
  let stopping = false;
  let running: Promise<void>[] = [];
  let wakeMain = new AbortController();
  let wakePoll = new AbortController();
  let api: EngineStatus = { api: 'unknown', apiDetail: null };
  let accountPausedUntil = 0;
  let lastWebhookAt = Number.NEGATIVE_INFINITY;
  let lastPollAt = Number.NEGATIVE_INFINITY;
  /** A poll is wanted at once (an unknown attempt, a reload); a mere re-plan leaves it false. */
  let pollUrgent = false;
  /** Whether the poller's current wait follows the plan, which a newly placed call changes. */
  let pollPlanned = false;
  /** What listings taught about call durations, per assistant (poll-plan.ts). */
  const durationSamples = new Map<number, DurationSample[]>();
  /** What listings showed of each assistant's call-list order (poller.ts ListOrder). */
  const listOrder = new Map<number, ListOrder>();
  /** Attempt id → start of the last round whose listing showed its call in progress. */
  const seenLiveAt = new Map<number, number>();
  /** Rounds in a row whose listing failed: the next waits longer each time (up to a minute). */
  let failedRounds = 0;
  let lastZoneWarningAt = Number.NEGATIVE_INFINITY;
  let cancelControlTimer: (() => void) | null = null;
  let cancelRemoteTimer: (() => void) | null = null;
  const remoteSeen = new Map<number, string>();

  const commit = createGroupCommit(db);
  const campaignLoggers = new Map<string, Logger>();
  const outcomeContext = {
    db,
    commit,
    logger: log,
    now: () => clock.now(),
    campaign: (id: number) => campaigns.get(id),
    onSlotFreed: () => wake(),
    onOutcome: (campaign: string, cls: string) => opts.metrics?.outcome(campaign, cls),
    results: { keepTranscripts: opts.keepTranscripts ?? true, serverTimezone: opts.serverTimezone },
  };

  // A reason of our own: abort() without one builds a DOMException (and its stack) each time.
  function wake(): void {
    wakeMain.abort(WAKE);
  }

  function wakePoller(): void {
    pollUrgent = true;
    wakePoll.abort(WAKE);
  }

  /** A call was placed: the next poll may come sooner than planned. */
  function replanPoll(): void {
    if (pollPlanned) wakePoll.abort(WAKE);
  }

  /**
   * The service's times disagree with api.server_timezone: said loudly, at most every
   * 10 minutes. Matching and settling already refuse to let it cause a second call.
   */
  function zoneDoubt(detail: string): void {
    const now = clock.now();
    if (now - lastZoneWarningAt < ZONE_WARNING_EVERY_MS) return;
    lastZoneWarningAt = now;
    log.warn(
      { detail, serverTimezone: opts.serverTimezone },
      "the service's zone-less timestamps do not read right in api.server_timezone; set it to the service's zone (calls are still matched, and unknown attempts are not dialled again while in doubt)",
    );
  }

  /** One child logger per campaign, made once: pino serialises a child's bindings when it is created. */
  function campaignLogger(name: string): Logger {
    let child = campaignLoggers.get(name);
    if (!child) {
      child = log.child({ campaign: name });
      campaignLoggers.set(name, child);
    }
    return child;
  }

  async function refreshCampaigns(force = false): Promise<void> {
    const rows = await campaignControlRows(db);
    const version = rows.map((r) => `${r.id}:${r.state}:${r.updated_at}:${r.problem ?? ''}`).join('|');
    if (!force && version === campaignsVersion) return;
    campaignsVersion = version;
    campaigns = new Map((await loadRuntimeCampaigns(db)).map((c) => [c.id, c]));
    log.debug({ campaigns: campaigns.size }, 'campaigns loaded');
  }

  async function refreshSuppressions(): Promise<void> {
    suppressed = await suppressedNumbers(db);
  }

  function dialingAllowed(now: number): boolean {
    return !stopping && api.api !== 'token-rejected' && now >= accountPausedUntil;
  }

  /** The instant a lead may be called: the campaign window and the person's own (rule 1, section 11). */
  function windowsOpen(c: RuntimeCampaign, lead: DueLead, at: number): boolean {
    if (!isOpen(c.window, at)) return false;
    return c.person(lead.contact_phone ?? lead.phone_number, lead.timezone).isOpen(at);
  }

  /**
   * One pass: fill the free slots of every running campaign with due leads, all claims
   * committed in one transaction, then one dial each. Returns when to look again.
   */
  async function tick(): Promise<number> {
    const now = clock.now();
    let nextAt = now + MAX_SLEEP_MS;
    if (!dialingAllowed(now)) return Math.min(nextAt, accountPausedUntil > now ? accountPausedUntil : nextAt);
    const live = await liveCountsByCampaign(db);
    let accountLive = [...live.values()].reduce((a, b) => a + b, 0);
    for (const c of campaigns.values()) opts.metrics?.liveCalls(c.name, live.get(c.id) ?? 0);

    const picked: { c: RuntimeCampaign; lead: DueLead; input: ClaimInput }[] = [];
    const pickedPhones = new Set<string>();
    for (const c of campaigns.values()) {
      if (c.state === 'completed') {
        if (await hasActiveLeads(db, c.id)) await reopen(c, now);
        continue;
      }
      if (c.state !== 'running' || c.problem) continue;
      if (!isOpen(c.window, now)) {
        const opening = nextOpening(c.window, now);
        if (opening !== null) nextAt = Math.min(nextAt, opening);
        continue;
      }
      let free = c.config.maxCallsInParallel - (live.get(c.id) ?? 0);
      if (opts.accountMaxCalls !== undefined) free = Math.min(free, opts.accountMaxCalls - accountLive);
      if (free <= 0) continue; // a freed slot wakes us
      // A few more than the free slots: some may be suppressed or outside their own hours.
      const candidates = await dueLeads(db, c.id, now, free + CANDIDATE_MARGIN);
      const held: Parameters<typeof deferHeld>[1][number][] = [];
      for (const lead of candidates) {
        if (free <= 0) break;
        const phone = lead.contact_phone ?? lead.phone_number;
        if (suppressed.has(phone)) {
          await suppressLead(db, lead.id, now);
          continue;
        }
        // Section 11: the person's zones, hours and regional rules, then attempts per number.
        const hold = await personHold(db, c, lead, phone, now);
        if (hold) {
          held.push({ leadId: lead.id, ...hold });
          continue;
        }
        if (pickedPhones.has(phone)) {
          // Rule 3 within this pass: another lead (here or in another campaign) has this number.
          await deferLead(db, lead.id, now + PHONE_BUSY_DEFER_MS, 'another call to this number is live', now);
          continue;
        }
        pickedPhones.add(phone);
        picked.push({
          c,
          lead,
          input: { campaignId: c.id, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone, assistantId: c.config.assistantId, owner: opts.instanceId, now },
        });
        free--;
        accountLive++;
      }
      // The leads held by section 11, deferred to their openings in one commit.
      await deferHeld(db, held, now);
      if (free > 0) {
        const due = await nextDueAt(db, c.id);
        if (due !== null) nextAt = Math.min(nextAt, Math.max(due, now + 50));
      }
      if (candidates.length === 0 && c.config.markCompleteWhenNoLeads && (live.get(c.id) ?? 0) === 0) {
        await maybeComplete(c, now);
      }
    }

    const claims = await claimAttempts(db, picked.map((p) => p.input));
    for (const [i, claim] of claims.entries()) {
      const { c, lead } = picked[i]!;
      if (claim.ok) {
        startDial(c, lead, claim.attempt);
        continue;
      }
      // The slot counted for this lead is still free: look again at once for another.
      nextAt = now;
      // Rule 3: wait for the other call to this number to end, without blocking the queue.
      if (claim.reason === 'phone-live') await deferLead(db, lead.id, now + PHONE_BUSY_DEFER_MS, 'another call to this number is live', now);
    }
    return nextAt;
  }

  function startDial(c: RuntimeCampaign, lead: DueLead, attempt: Parameters<typeof dial>[1]['attempt']): void {
    let variables: Record<string, unknown> = {};
    try {
      variables = JSON.parse(lead.variables_json) as Record<string, unknown>;
    } catch {
      variables = {};
    }
    const task = dial(
      { db, commit, client, logger: campaignLogger(c.name), now: () => clock.now(), settleMs },
      {
        attempt,
        variables,
        canSend: () => {
          const current = campaigns.get(c.id);
          const at = clock.now();
          return dialingAllowed(at) && current?.state === 'running' && windowsOpen(c, lead, at);
        },
        retryAtIfNotSent: () => c.person(lead.contact_phone ?? lead.phone_number, lead.timezone).nextOpening(clock.now()) ?? clock.now() + 3600_000,
      },
    )
      .then(async (report) => {
        await onDialReport(c, report);
        return report;
      })
      .catch(async (err: unknown): Promise<DialReport> => {
        // A store error (SQLITE_BUSY from another writer…) while recording the answer: the
        // call may exist, so the attempt is followed as unknown and the call list settles
        // it (rule 6). Left unhandled, the rejection would crash the daemon.
        const detail = 'make_call result could not be recorded';
        log.error({ err: errText(err), attempt: attempt.id }, detail);
        await markUnknownAfterStoreError(attempt.id, detail);
        wakePoller();
        return { kind: 'unknown', detail };
      });
    inflight.add(task);
    void task.then(
      (report) => {
        inflight.delete(task);
        // A placed (or unknown) call still holds its slot: waking the scheduler for it
        // would only re-read the same counts. Every other answer frees the slot.
        if (report.kind !== 'placed' && report.kind !== 'unknown') wake();
      },
      () => {
        inflight.delete(task);
        wake();
      },
    );
  }

  /** Moves a `dialing` attempt to unknown after a store error, trying again while the store is busy. */
  async function markUnknownAfterStoreError(attemptId: number, detail: string): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await markUnknown(db, attemptId, { detail, settleDeadline: clock.now() + settleMs });
        return;
      } catch (err) {
        if (tries >= STORE_RETRY_TRIES || stopping) {
          log.error({ err: errText(err), attempt: attemptId }, 'attempt left dialing; it is recovered as unknown at the next start');
          return;
        }
        await clock.sleep(STORE_RETRY_MS);
      }
    }
  }

  async function onDialReport(c: RuntimeCampaign, report: DialReport): Promise<void> {
    const now = clock.now();
    switch (report.kind) {
      case 'placed':
        opts.metrics?.callPlaced(c.name);
        replanPoll();
        if (api.api !== 'ok') setApi('ok', null);
        return;
      case 'unknown':
        opts.metrics?.unknownAttempt();
        wakePoller();
        return;
      case 'token-rejected':
        setApi('token-rejected', 'the service rejected the API token (401/403/redirect/HTML)');
        return;
      case 'assistant-not-found':
        await setCampaignProblem(db, c.id, `assistant ${c.config.assistantId} not found by the service (404)`, now);
        await refreshCampaigns(true);
        return;
      case 'account-rejected':
        accountPausedUntil = now + ACCOUNT_PAUSE_MS;
        log.error({ detail: report.detail }, 'the service refused calls for the account; dialing pauses for 5 minutes');
        return;
      default:
        return;
    }
  }

  function setApi(status: ApiStatus, detail: string | null): void {
    if (api.api === status && api.apiDetail === detail) return;
    api = { api: status, apiDetail: detail };
    if (status === 'token-rejected') log.error('dialing stopped: the API token is rejected; fix the token and send SIGHUP (or wait for the next check)');
    else log.info({ api: status }, 'service status changed');
  }

  async function reopen(c: RuntimeCampaign, now: number): Promise<void> {
    await reopenCompletedCampaign(db, c.id, now);
    log.info({ campaign: c.name }, 'campaign has new leads; running again');
    await refreshCampaigns(true);
  }

  async function maybeComplete(c: RuntimeCampaign, now: number): Promise<void> {
    if (await hasActiveLeads(db, c.id)) return;
    // A webhook success may still turn out to be a voicemail (rule 5 retries it): the
    // campaign is complete only once the call list has said who answered.
    const unconfirmed = await newestUnconfirmedSuccess(db, c.id, now - CONFIRM_WINDOW_MS);
    if (unconfirmed !== null) {
      // One poll round that started after the last of them ended settles them all.
      if (unconfirmed >= lastPollAt) wakePoller();
      return;
    }
    if (!(await hasLeads(db, c.id))) return;
    await completeRunningCampaign(db, c.id, now);
    log.info({ campaign: c.name }, 'campaign completed: every lead is final');
    await refreshCampaigns(true);
  }

  async function mainLoop(): Promise<void> {
    while (!stopping) {
      let nextAt = clock.now() + MAX_SLEEP_MS;
      try {
        nextAt = await tick();
      } catch (err) {
        log.error({ err: errText(err) }, 'scheduler tick failed; retrying');
        nextAt = clock.now() + 1000;
      }
      if (stopping) break;
      const delay = Math.min(MAX_SLEEP_MS, Math.max(0, nextAt - clock.now()));
      const signal = wakeMain.signal;
      if (!signal.aborted) await clock.sleep(delay, signal);
      wakeMain = new AbortController();
    }
  }

  /**
   * When to list calls next (an instant). Without webhooks the call list is how calls
   * end, so it is read when calls have probably ended (poll-plan.ts). While webhooks
   * arrive it is a backstop: for a webhook that was lost (a call live for longer than
   * calls take) and to confirm webhook successes, which carry no answered_by; a slow
   * cadence does both at a fraction of a request per call.
   */
  async function nextPollTime(): Promise<number> {
    pollPlanned = false;
    await reportConfirming();
    const at = await pollTimeByState();
    // A service that fails listings is not asked again at once, whatever the plan says.
    return failedRounds > 0 ? Math.max(at, lastPollAt + Math.min(POLL_MAX_GAP_MS, POLL_MIN_GAP_MS * 5 * 2 ** (failedRounds - 1))) : at;
  }

  async function pollTimeByState(): Promise<number> {
    if (api.api === 'token-rejected') return lastPollAt + TOKEN_PROBE_MS;
    if (await anyUnknownAttempt(db)) return lastPollAt + POLL_UNKNOWN_MS;
    const now = clock.now();
    const confirmAt = await confirmationDue(now);
    const webhooksHealthy = opts.webhooksEnabled && now - lastWebhookAt < WEBHOOKS_HEALTHY_MS;
    if (!webhooksHealthy) {
      if (opts.pollIntervalMs !== undefined) return lastPollAt + opts.pollIntervalMs;
      return Math.min(confirmAt, await plannedPoll(now));
    }
    const backstop = lastPollAt + (opts.pollIntervalWithWebhooksMs ?? POLL_BACKSTOP_MS);
    const oldest = await oldestPlacedAt(db);
    if (oldest === null) return Math.min(confirmAt, backstop);
    const overdueAt = oldest + CALL_OVERDUE_MS;
    return Math.min(confirmAt, overdueAt <= lastPollAt ? lastPollAt + POLL_OVERDUE_MS : Math.min(backstop, overdueAt));
  }

  /** Refreshes the `confirming` gauge; planning runs at least every 30 s and after each round. */
  async function reportConfirming(): Promise<void> {
    if (!opts.metrics?.confirming) return;
    const counts = await unconfirmedCountsByCampaign(db, 0);
    for (const c of campaigns.values()) opts.metrics.confirming(c.name, counts.get(c.id) ?? 0);
  }

  /** When the webhook successes awaiting the call list's word should be listed: a page's worth, or the oldest waited long enough. */
  async function confirmationDue(now: number): Promise<number> {
    const waiting = await unconfirmedSummary(db, now - CONFIRM_WINDOW_MS, CONFIRM_BATCH);
    if (waiting.count === 0 || waiting.oldestEndedAt === null) return Number.POSITIVE_INFINITY;
    if (waiting.count >= CONFIRM_BATCH) return lastPollAt + POLL_MIN_GAP_MS;
    return Math.max(lastPollAt + POLL_MIN_GAP_MS, waiting.oldestEndedAt + CONFIRM_WAIT_MS);
  }

  /** The adaptive plan over the calls in progress. */
  async function plannedPoll(now: number): Promise<number> {
    const placed = (await listLiveAttempts(db)).filter((a) => a.state === 'placed');
    const ids = new Set(placed.map((a) => a.id));
    for (const id of seenLiveAt.keys()) if (!ids.has(id)) seenLiveAt.delete(id);
    const live = placed.map((a) => {
      const sentAt = a.answered_at ?? a.sent_at ?? a.created_at;
      return { assistantId: a.assistant_id, sentAt, aliveAt: Math.max(sentAt, seenLiveAt.get(a.id) ?? sentAt) };
    });
    pollPlanned = true;
    return nextPollAt({
      now,
      lastPollAt,
      live,
      samples: (id) => durationSamples.get(id) ?? [],
      ...(client.budgetHeadroom ? { headroom: client.budgetHeadroom() } : {}),
      pollsPerCall: POLL_PER_CALL,
      minGapMs: POLL_MIN_GAP_MS,
      maxGapMs: POLL_MAX_GAP_MS,
      learningGapMs: opts.webhooksEnabled && lastWebhookAt === Number.NEGATIVE_INFINITY ? POLL_AWAITING_WEBHOOKS_MS : POLL_LEARNING_MS,
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

  async function pollLoop(): Promise<void> {
    while (!stopping) {
      pollUrgent = false;
      try {
        if (api.api !== 'token-rejected') {
          lastPollAt = clock.now();
          const round = await pollOnce({ ...outcomeContext, client, maxDurationSeconds: (id) => maxDurations.get(id) ?? null, onZoneDoubt: zoneDoubt, listOrder }, pollerOptions);
          if (round.requests > 0 || round.settled > 0) log.debug({ requests: round.requests, matched: round.matched, settled: round.settled, stuck: round.stuck, finalised: round.finalised }, 'poll round');
          learnDurations(round);
          failedRounds = round.failed > 0 ? failedRounds + 1 : 0;
          // Confirmed or finalised successes may be what a campaign's completion waited for.
          if (round.matched > 0 || round.finalised > 0) wake();
          // More webhook successes wait than one round takes: the next round follows at once.
          if (round.backlog && round.matched + round.finalised > 0) pollUrgent = true;
        } else {
          lastPollAt = clock.now();
          await probeToken();
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
    while (!stopping && !pollUrgent) {
      const signal = wakePoll.signal;
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
      if (signal.aborted) wakePoll = new AbortController();
      if (clock.now() >= until) break;
    }
    pollPlanned = false;
    wakePoll = new AbortController();
  }

  async function probeToken(): Promise<void> {
    try {
      await client.probe();
      setApi('ok', null);
      wake();
    } catch (err) {
      const kind = (err as { kind?: string }).kind;
      if (kind === 'token-rejected') setApi('token-rejected', 'the service rejected the API token (401/403/redirect/HTML)');
      else setApi('unreachable', errText(err));
    }
  }

  async function loadAssistants(): Promise<void> {
    try {
      for (const a of await client.assistants()) maxDurations.set(a.id, a.maxDurationSeconds);
      setApi('ok', null);
    } catch (err) {
      const kind = (err as { kind?: string }).kind;
      if (kind === 'token-rejected') setApi('token-rejected', 'the service rejected the API token (401/403/redirect/HTML)');
      else log.warn({ err: errText(err) }, 'could not list assistants; using default maximum call duration');
    }
  }

  function scheduleControlCheck(): void {
    // Operator commands (campaign pause/resume…) change rows; a cheap look each second
    // makes them take effect within a second without waking the scheduler otherwise.
    cancelControlTimer = clock.setTimer(CONTROL_CHECK_MS, () => {
      if (stopping) return;
      const before = campaignsVersion;
      refreshCampaigns()
        .then(() => {
          if (campaignsVersion !== before) wake();
        })
        .catch((err: unknown) => log.warn({ err: errText(err) }, 'campaign check failed'))
        .finally(() => {
          if (!stopping) scheduleControlCheck();
        });
    });
  }

  function scheduleRemoteFollow(delay: number): void {
    cancelRemoteTimer = clock.setTimer(delay, () => {
      if (stopping) return;
      followRemoteCampaigns(db, client, campaigns.values(), remoteSeen, clock.now(), log)
        .then(async (changed) => {
          if (changed) {
            await refreshCampaigns(true);
            wake();
          }
        })
        .catch((err: unknown) => log.warn({ err: errText(err) }, 'could not read the linked service campaigns'))
        .finally(() => {
          if (!stopping) scheduleRemoteFollow(REMOTE_FOLLOW_MS);
        });
    });
  }

  return {
    /** Recovers unfinished attempts, then starts the scheduler and poller loops. */
    async start(): Promise<void> {
      await recoverUnfinishedAttempts(db, { now: clock.now(), settleMs, owner: opts.instanceId, logger: log });
      await refreshCampaigns(true);
      await refreshSuppressions();
      await loadAssistants();
      scheduleControlCheck();
      scheduleRemoteFollow(0);
      running = [mainLoop(), pollLoop()];
    },
    /**
     * Stops claiming, waits up to `graceMs` for in-flight make_call requests, and
     * returns. Whatever is still in flight stays `dialing` and is recovered as unknown.
     */
    async stop(graceMs = 10_000): Promise<void> {
      if (stopping) return;
      stopping = true;
      cancelControlTimer?.();
      cancelRemoteTimer?.();
      wake();
      wakePoller();
      const drained = Promise.allSettled([...inflight]);
      let timedOut = false;
      const cancel = new AbortController();
      await Promise.race([drained, clock.sleep(graceMs, cancel.signal).then(() => (timedOut = true))]);
      cancel.abort();
      if (timedOut) log.warn({ inflight: inflight.size }, 'stopped with make_call requests still in flight; they will be settled as unknown');
      await Promise.race([Promise.allSettled(running), clock.sleep(1000)]);
    },
    /** Reloads campaign rows and the suppression list (after SIGHUP or an import). */
    async reload(): Promise<void> {
      await refreshCampaigns(true);
      await refreshSuppressions();
      await loadAssistants();
      wake();
      wakePoller();
    },
    /** Handles one post-call webhook delivery. */
    async handleWebhook(payload: unknown, receivedAt: number): Promise<WebhookResult> {
      const result = await handleWebhookPayload(
        { ...outcomeContext, serverTimezone: opts.serverTimezone, clockSkewMs: pollerOptions.clockSkewMs, onZoneDoubt: zoneDoubt },
        payload,
        receivedAt,
      );
      // Any authentic, readable delivery shows that webhooks reach us.
      if (!result.invalid) lastWebhookAt = receivedAt;
      return result;
    },
    /** The token may work again (it was reread): probe it now. */
    async tokenChanged(): Promise<void> {
      await probeToken();
    },
    status(): EngineStatus {
      return api;
    },
    /** Number of make_call requests in flight. */
    inflight(): number {
      return inflight.size;
    },
    wake,
  };
}

export type Engine = ReturnType<typeof createEngine>;

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

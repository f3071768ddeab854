import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { createGroupCommit, type GroupCommit } from '../store/group-commit.js';
import type { Database } from '../store/types.js';
import { createCampaignCatalog, type CampaignCatalog } from './campaign-catalog.js';
import { createCampaignView } from './campaign-view.js';
import type { EngineLoop, EngineMetrics, EngineStatus } from './engine-types.js';
import { createControlLoop } from './loops/control-loop.js';
import { createDialLoop, type LeaseView } from './loops/dial-loop.js';
import { createOutcomeLoop } from './loops/outcome-loop.js';
import { createRemoteSyncLoop } from './loops/remote-sync-loop.js';
import type { OutcomeContext } from './outcomes.js';
import { CLOCK_SKEW_MS, confirmBatchOf, CONFIRM_WINDOW_MS, CONTROL_CHECK_MS, DEFAULT_MAX_DURATION_SECONDS, STUCK_GRACE_MS } from './policy.js';
import type { PollerOptions } from './poller.js';
import type { EngineClient } from './ports.js';
import type { PredialDeps } from './predial.js';
import type { RuntimeCampaign } from './runtime-campaign.js';
import { recoverUnfinishedAttempts } from './recovery.js';
import { createServiceState } from './service-state.js';
import { createWakeSignal } from './wake-signal.js';
import { handleWebhookPayload, type WebhookContext, type WebhookResult } from './webhook.js';
import { createZoneDoubtWarning } from './zone-doubt.js';

export type { EngineMetrics, EngineStatus } from './engine-types.js';

// The supervisor. It builds what the loops share (the campaigns as last read, the
// service's state, the group commit, the wake signals), starts the loops and stops them,
// and owns graceful shutdown (docs/design.md §8). Each loop has one job:
//   control      campaign controls written by other commands (every second)
//   remote-sync  start/stop of linked service campaigns (every minute)
//   dial         claims due leads into free slots and places the calls (planner.ts decides)
//   outcome      reads the call list: outcomes, unknown attempts settled, stuck calls
// Webhooks are recorded on any instance. Claiming, dialing, reading the call list and
// following remote campaigns are the ACTIVE duties (startActive/stopActive): an instance
// that is not the active one (a standby) would run only the control loop and webhooks.

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
  /** The lease claims are made under (PostgreSQL with several instances, src/ha/elector.ts). */
  lease?: LeaseView;
  /** The account this engine dials for (several accounts, accounts.ts): only its campaigns are dialed and polled. */
  account?: { name: string; dials: (c: RuntimeCampaign) => boolean };
  /** The daemon's campaign catalog, shared by its accounts' engines (accounts.ts); absent: this engine reads its own. */
  catalog?: CampaignCatalog;
  /**
   * The daemon's group commit, shared by its accounts' engines (accounts.ts): answers,
   * outcomes and (durably) the claims made before make_call. Absent: this engine has its own.
   */
  commit?: GroupCommit;
  /** How campaigns' pre-dial checks are sent: the HTTP post and the secrets (clock: the engine's). */
  predial?: Omit<PredialDeps, 'clock'>;
}

/** After the in-flight requests, how long the loops get to return before stop() does. */
const LOOP_EXIT_MS = 1000;

/** Creates the engine; nothing runs until `start()`. */
export function createEngine(opts: EngineOptions) {
  const { db, client, clock, logger } = opts;
  const log = logger.child(opts.account ? { component: 'engine', account: opts.account.name } : { component: 'engine' });
  const settleMs = opts.settleSeconds * 1000;
  const poller: PollerOptions = {
    clockSkewMs: CLOCK_SKEW_MS,
    stuckGraceMs: STUCK_GRACE_MS,
    defaultMaxDurationSeconds: DEFAULT_MAX_DURATION_SECONDS,
    serverTimezone: opts.serverTimezone,
    confirmWindowMs: CONFIRM_WINDOW_MS,
    ...opts.poller,
  };

  const commit = opts.commit ?? createGroupCommit(db);
  const campaigns = createCampaignView(opts.catalog ?? createCampaignCatalog(db, log, { now: () => clock.now(), checkEveryMs: CONTROL_CHECK_MS }), opts.account?.dials);
  const service = createServiceState(client, log);
  const dialWake = createWakeSignal();
  const wake = (): void => dialWake.wake();
  const zoneDoubt = createZoneDoubtWarning(clock, log, opts.serverTimezone);
  let lastWebhookAt = Number.NEGATIVE_INFINITY;
  let stopping = false;

  const outcomeContext: OutcomeContext = {
    db,
    commit,
    logger: log,
    now: () => clock.now(),
    campaign: (id: number) => campaigns.get(id),
    onSlotFreed: wake,
    onOutcome: (campaign: string, cls: string) => opts.metrics?.outcome(campaign, cls),
    results: { keepTranscripts: opts.keepTranscripts ?? true, serverTimezone: opts.serverTimezone },
  };

  const webhookContext: WebhookContext = { ...outcomeContext, serverTimezone: opts.serverTimezone, clockSkewMs: poller.clockSkewMs, onZoneDoubt: zoneDoubt };
  /** Any authentic, readable delivery shows that webhooks reach us. */
  const webhookReceived = (at: number): void => {
    lastWebhookAt = at;
  };

  const control = createControlLoop({ clock, logger: log, campaigns, wakeDial: wake });
  const remoteSync = createRemoteSyncLoop({ db, client, clock, logger: log, campaigns, wakeDial: wake });
  const outcomes = createOutcomeLoop({
    db,
    client,
    clock,
    logger: log,
    metrics: opts.metrics,
    campaigns,
    service,
    outcomes: outcomeContext,
    poller,
    onZoneDoubt: zoneDoubt,
    wakeDial: wake,
    webhooks: { enabled: opts.webhooksEnabled ?? false, lastAt: () => lastWebhookAt },
    ...(opts.account ? { confirmBatch: confirmBatchOf(opts.account.name) } : {}),
    pollIntervalMs: opts.pollIntervalMs,
    pollIntervalWithWebhooksMs: opts.pollIntervalWithWebhooksMs,
  });
  const dialer = createDialLoop({
    db,
    commit,
    client,
    clock,
    logger: log,
    metrics: opts.metrics,
    instanceId: opts.instanceId,
    lease: opts.lease,
    accountMaxCalls: opts.accountMaxCalls,
    settleMs,
    campaigns,
    service,
    wake: dialWake,
    poll: outcomes,
    predial: opts.predial ? { ...opts.predial, clock } : undefined,
  });
  /** The loops only the active instance runs, in the order they start. */
  const activeLoops: EngineLoop[] = [remoteSync, dialer, outcomes];

  /** Whether the active loops run (an instance holding the role, or the only instance). */
  let active = false;

  /**
   * An attempt left `dialing` by a previous holder (a crash, a lost role) is followed as
   * unknown (rule 6). `taken`: an account's lease (several active instances): only what its
   * previous holders left, never another live instance's calls in flight.
   */
  async function recover(taken?: { account: string; fence: number }): Promise<void> {
    const account = taken && { name: taken.account, fence: taken.fence, campaigns: campaigns.scope() };
    await recoverUnfinishedAttempts(db, { now: clock.now(), settleMs, owner: opts.instanceId, logger: log, ...(account ? { account } : {}) });
  }

  function startActive(): void {
    active = true;
    for (const loop of activeLoops) loop.start();
  }

  /**
   * Stops claiming at once, waits up to `graceMs` for in-flight make_call requests, and
   * returns. Whatever is still in flight stays `dialing` and is recovered as unknown.
   */
  async function stopActive(graceMs: number): Promise<void> {
    active = false;
    for (const loop of activeLoops) loop.stop();
    if (await dialer.drain(graceMs)) {
      log.warn({ inflight: dialer.inflight() }, 'stopped with make_call requests still in flight; they will be settled as unknown');
    }
    await Promise.race([Promise.allSettled(activeLoops.map((l) => l.done())), clock.sleep(LOOP_EXIT_MS)]);
  }

  return {
    /**
     * Recovers unfinished attempts, then starts the loops. A `standby` start (several
     * instances on PostgreSQL) only follows campaigns and records webhooks until becomeActive.
     */
    async start(role: { standby?: boolean } = {}): Promise<void> {
      if (!role.standby) await recover();
      await campaigns.refresh(true);
      await campaigns.refreshSuppressions();
      // A standby spends nothing on the token: the instance dialing it is at its full rate,
      // and one more request there made the service refuse that instance's next make_call
      // (429). The assistants are listed when the role is won (becomeActive).
      if (!role.standby) await service.loadAssistants();
      control.start();
      if (!role.standby) startActive();
    },
    /** Graceful shutdown (docs/design.md §8): see stopActive. */
    async stop(graceMs = 10_000): Promise<void> {
      if (stopping) return;
      stopping = true;
      control.stop();
      await stopActive(graceMs);
    },
    /**
     * Takes up the active duties on a started engine (the role was won): recovery of
     * the previous holder's unfinished attempts, then claiming, dialing, the call list.
     * `taken`: an account's lease was won (several active instances): recovery of that account only.
     */
    async becomeActive(taken?: { account: string; fence: number }): Promise<void> {
      if (active || stopping) return;
      await recover(taken);
      await service.loadAssistants();
      startActive();
    },
    /** Gives them up (the role was lost), as a graceful stop does; webhooks are still recorded. */
    async becomeStandby(graceMs = 10_000): Promise<void> {
      if (!active) return;
      await stopActive(graceMs);
    },
    /** Whether this engine claims and dials now. */
    isActive(): boolean {
      return active;
    },
    /** Reloads campaign rows and the suppression list (after SIGHUP or an import). */
    async reload(): Promise<void> {
      await campaigns.refresh(true);
      await campaigns.refreshSuppressions();
      if (active) await service.loadAssistants();
      wake();
      outcomes.urgent();
    },
    /** Handles one post-call webhook delivery. */
    async handleWebhook(payload: unknown, receivedAt: number): Promise<WebhookResult> {
      const result = await handleWebhookPayload(webhookContext, payload, receivedAt);
      if (!result.invalid) webhookReceived(receivedAt);
      return result;
    },
    /** What a delivery for this engine's calls is applied in (accounts.ts routes deliveries by the attempt found). */
    webhookContext,
    webhookReceived,
    /** The token may work again (it was reread): probe it now. */
    async tokenChanged(): Promise<void> {
      // A standby leaves the token to the instance dialing it (see start); it lists the assistants when it takes over.
      if (!active) return;
      if (await service.probe()) wake();
    },
    status(): EngineStatus {
      return service.status();
    },
    /** Whether the campaign is dialed by this engine (its account's). */
    owns(campaignId: number): boolean {
      return campaigns.owns(campaignId);
    },
    /** Number of make_call requests in flight. */
    inflight(): number {
      return dialer.inflight();
    },
    wake,
  };
}

export type Engine = ReturnType<typeof createEngine>;

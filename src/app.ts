import os from 'node:os';
import type { Kysely } from 'kysely';
import type { LoadedConfig } from './config/types.js';
import type { Logger } from './log/logger.js';
import type { Clock } from './time/clock.js';
import type { Database } from './store/types.js';
import type { DatabaseHandle } from './store/database.js';
import { openConfiguredStore, openStore, storePassword } from './store/open-store.js';
import { withSetupLock } from './store/setup-lock.js';
import type { SessionLockOptions } from './store/session-lock.js';
import { listenForFreedSlots, type WakeupListener } from './store/pg-wakeups.js';
import { statisticsRefresher } from './store/planner-statistics.js';
import { releaseLease, renewLease, takeLease } from './store/lease.js';
import { createElector, type Elector } from './ha/elector.js';
import { createRoleSwitch } from './ha/role-switch.js';
import { createAccountLeaseManager, type AccountBudgets, type AccountLeaseManager } from './ha/account-lease-manager.js';
import { storeAccountLeasePort } from './ha/account-lease-port.js';
import { createHeldAccounts, type HeldAccounts } from './ha/held-accounts.js';
import { liveLeaseInstances } from './store/account-leases.js';
import { migrateToLatest } from './store/migrate.js';
import { readiness } from './http/readiness.js';
import { createAccountEngines, type AccountEngines, type AccountLane } from './engine/accounts.js';
import { campaignAccount, DEFAULT_ACCOUNT } from './config/accounts.js';
import type { EngineClient } from './engine/ports.js';
import { startHttpServer, type HttpServerHandle } from './http/server.js';
import { createMetrics, type Metrics } from './http/metrics.js';
import { judgeSuccesses, syncCampaigns, syncLeadFiles, syncSuppressionList, type SuccessJudging } from './lifecycle/sync-config.js';
import { acquireDaemonSlot, HEARTBEAT_STALE_MS, pidAlive } from './lifecycle/daemon-row.js';
import { heartbeat, liveInstancesDialing, markStopped, type ApiCounters, type DaemonAccount } from './store/daemons.js';
import { probeCampaigns } from './store/campaigns.js';
import { startRemoteLeadSync } from './lifecycle/remote-leads.js';
import type { RemoteLeadSource } from './leads/remote-sync.js';
import { startRetentionSweeps } from './results/retention.js';
import { startDaemonHooks } from './hooks/wire.js';
import { createPredialPost } from './engine/predial-post.js';
import { createDashboard } from './dashboard/routes.js';
import { createGuard } from './dashboard/guard.js';
import { dashboardExposure, isLoopback } from './config/start-checks.js';
import { createApi } from './api/api.js';
import { createAuthorizer } from './api/auth.js';
import { apiRoutes } from './api/routes/index.js';

// The composition root: the only place that wires the store, the service client, the
// engine and the HTTP surface together. Everything it builds is passed in or created
// here, so tests can run the same app on a ManualClock and an in-memory database.

export interface AppOptions {
  config: LoadedConfig;
  clock: Clock;
  logger: Logger;
  client: EngineClient;
  /** Where leads of campaigns linked by remote_campaign_id come from (the service client). */
  leadSource?: RemoteLeadSource;
  /** The webhook secret (read from the environment variable the config names). */
  webhookSecret: () => string | undefined;
  /** The value of a hook's or a pre-dial check's secret_env (default: the process environment). */
  hookSecret?: (envName: string) => string | undefined;
  /**
   * Run once the HTTP surface listens (its port, null without one) and before the engines
   * start dialing, for every account (`accounts` undefined). With several active instances
   * (accounts on PostgreSQL) it runs instead for each account this instance takes, with
   * `accounts` naming it, once it holds it: see `registersAtTake`.
   */
  beforeDialing?: (httpPort: number | null, accounts?: readonly string[]) => Promise<void>;
  /** Several active instances: each account's request budget, handed over with the account. */
  accountBudgets?: AccountBudgets;
  version: string;
  pid?: number;
  /** Start the HTTP surface (default true). */
  http?: boolean;
  metrics?: Metrics;
  /** Override the daemon file's database (tests). */
  databaseFile?: string;
  /** Why there is no usable token (no file, empty…), reread after SIGHUP; undefined when fine. */
  tokenProblem?: () => string | undefined;
  /** Where the token is read from (token-source.ts's encoding), written with each heartbeat for `status`. */
  tokenSource?: () => string;
  /** The rate budget's counters, written with each heartbeat for `status` (a separate process). */
  apiCounters?: () => ApiCounters;
  /** Each account's client (several accounts, README "Many accounts"); absent: `client` is the one account, "default". */
  accounts?: AccountLane[];
  /** An account's request counters and why it has no usable token, written with each heartbeat for `status`. */
  accountFacts?: (name: string) => { requests: { sent: number; rateLimited: number }; tokenProblem?: string | undefined } | undefined;
  /** The dashboard token (read from the variable http.dashboard_token_env names); undefined: none. */
  dashboardToken?: string;
}

/** The dashboard would be open to the network (or its token variable is empty): the daemon does not start. */
export class DashboardExposureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DashboardExposureError';
  }
}

/** Instances sharing accounts run on this database and this one has no `accounts:`: it would dial beside them. */
export class SharingModeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharingModeError';
  }
}

export interface App {
  db: Kysely<Database>;
  engine: AccountEngines;
  metrics: Metrics;
  httpPort: number | null;
  /** The accounts whose set-up this instance does (webhook.register): all (undefined), or, with several active instances, those it holds now. */
  ownAccounts(): readonly string[] | undefined;
  /** Rereads campaign files, lead files and the suppression list (SIGHUP). */
  reload(config: LoadedConfig): Promise<void>;
  /** Graceful stop: no new claims, in-flight make_call given up to `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const HEARTBEAT_MS = 2_000;
/** How long a lost lease leaves in-flight make_call requests to finish before they are left to the next active instance. */
const STANDBY_GRACE_MS = 2_000;
const CHECKPOINT_MS = 10_000;
/** PostgreSQL connections of the API (beside the engine's one and the lease's). */
const API_CONNECTIONS = 4;

/** Opens the store, syncs the config into it, and starts the engine and the HTTP surface. */
export async function startApp(opts: AppOptions): Promise<App> {
  const { clock, logger } = opts;
  const daemon = opts.config.daemon;
  const metrics = opts.metrics ?? createMetrics();
  if (opts.http !== false) {
    // `run` refused this already (config/start-checks.ts); kept for every other caller of startApp.
    const exposed = dashboardExposure(daemon.http, opts.dashboardToken);
    if (exposed) throw new DashboardExposureError(`${daemon.file}: ${exposed.field}: ${exposed.message} — ${exposed.hint}`);
  }
  // On PostgreSQL, a transaction of this daemon left idle past its lease (+2 s) is ended by
  // the server: a daemon frozen inside one (a paused VM) would otherwise hold the rows it
  // locked, and with them every other instance's takeover, until it woke.
  const storeOptions = { idleInTransactionMs: (daemon.ha.leaseSeconds + 2) * 1000 };
  const store: DatabaseHandle = await openConfiguredStore({ ...daemon, database: opts.databaseFile ?? daemon.database }, process.env, storeOptions);
  const cleanups: (() => Promise<void>)[] = [() => store.close()];
  const runCleanups = async (): Promise<void> => {
    // Last in, first out; every cleanup runs even when one fails.
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        logger.error({ err: String(err) }, 'cleanup failed');
      }
    }
  };
  try {
    const { db } = store;
    // A frozen instance holding the migration or setup lock has its session ended by this one (session-lock.ts).
    const lockWatch: SessionLockOptions = {
      onWaiting: () => logger.info('another instance is migrating or writing the config into the database: waiting for it'),
      onFrozenHolderEnded: ({ pid, idleMs }) => logger.warn({ serverPid: pid, idleMs }, 'ended the database session of a frozen instance that held the migration or setup lock (silent past the bound); its next statement fails'),
      onFrozenHolderKept: (reason) => logger.warn({ reason }, 'a frozen instance holds the migration or setup lock and the server refused to end its session: waiting for it (grant this role pg_signal_backend)'),
    };
    const { applied } = await migrateToLatest(db, { clock, ...lockWatch });
    // The config sync may wait on the service (assistants): it shows it is alive meanwhile.
    const setupLock: SessionLockOptions = { ...lockWatch, keepalive: clock };
    if (applied.length > 0) logger.info({ applied }, 'database migrated');
    const pid = opts.pid ?? process.pid;
    const instanceId = `${os.hostname()}:${pid}:${clock.now()}`;
    // PostgreSQL: several instances share the database and a lease decides which one dials
    // (docs/design.md §10). SQLite: one daemon per file, always active.
    const shared = store.dialect === 'postgres';
    // PostgreSQL with accounts: in the daemon file: several instances are all active, each
    // account dialed by the one holding its lease (docs/several-instances.md). The one lease
    // then decides only the duties that are not per account (hook delivery, remote leads,
    // retention). Without accounts: the standby pair as before.
    const perAccount = shared && (daemon.accounts?.length ?? 0) > 0;
    if (shared && !perAccount) {
      // Without accounts: this instance would dial every campaign under the one lease, beside
      // the instances that dial them under their accounts' leases: a double dial.
      const sharing = await liveLeaseInstances(db);
      if (sharing.length > 0) {
        throw new SharingModeError(
          `${daemon.file}: accounts: is missing, but ${sharing.length} instance(s) on this database share accounts (several active instances) — give this daemon file the same accounts: as theirs, or stop them first (README, "Many accounts")`,
        );
      }
    }
    const dialingMode = shared ? (perAccount ? 'per-account' : 'one-lease') : undefined;
    await acquireDaemonSlot(db, { instanceId, pid, hostname: os.hostname(), version: opts.version, now: clock.now(), maxCallsInParallel: daemon.maxCallsInParallel, shared, dialingMode });
    cleanups.push(() => markStopped(db, instanceId, clock.now()));
    if (perAccount) {
      // The other way round: a standby pair's active instance dials every campaign under the
      // one lease; this one would dial its accounts beside it. Checked after this instance's
      // row is written, so two started at once see each other (both refuse, none dials twice).
      const pair = await liveInstancesDialing(db, 'one-lease', { except: instanceId, since: clock.now() - HEARTBEAT_STALE_MS });
      if (pair.length > 0) {
        const who = pair.map((r) => `pid ${r.pid} on ${r.hostname}`).join(', ');
        throw new SharingModeError(
          `${daemon.file}: accounts: is set, but ${pair.length} instance(s) on this database (${who}) run without accounts: as a standby pair and dial every campaign — stop them first, then start each instance with the same accounts: (README, "Many accounts")`,
        );
      }
    }

    // Several active instances sync the same files: the assistants are listed only when needed (sync-config.ts).
    const listAssistants = perAccount ? 'when-needed' : 'always';
    const judgingAtStart = await withSetupLock(db, (conn) => syncConfig(conn, opts.config, opts, listAssistants), setupLock);
    // Hook subscriptions before the engine starts, so every state change from here on queues its events.
    const secretOf = opts.hookSecret ?? ((name: string) => process.env[name]);
    const hooks = await startDaemonHooks(daemon, { db, clock, logger, metrics, secret: secretOf, sending: !shared });
    cleanups.push(() => hooks.stop());
    const predial = createPredialPost();
    cleanups.push(() => predial.close());
    let elector: Elector | null = null;
    const leaseMs = daemon.ha.leaseSeconds * 1000;
    // Per account: the lease manager is made once the engines exist (its handover is theirs); until it starts nothing is held.
    let leases: AccountLeaseManager | null = null;
    const notYetHeld = createHeldAccounts(clock);
    const held: HeldAccounts = {
      holds: (account) => (leases?.held ?? notYetHeld).holds(account),
      fence: (account) => (leases?.held ?? notYetHeld).fence(account),
      list: () => (leases?.held ?? notYetHeld).list(),
      onChange: (fn) => (leases?.held ?? notYetHeld).onChange(fn),
      lost: (account, reason) => (leases?.held ?? notYetHeld).lost(account, reason),
    };

    // Several active instances: two of every three webhooks are another instance's account's,
    // only looked up and queued for it (webhook-inbox.ts); on a connection of their own, that
    // work does not wait in line behind this instance's own transactions on the engine's.
    const routeStore = perAccount ? await openConfiguredStore({ ...daemon, database: opts.databaseFile ?? daemon.database }, process.env, storeOptions) : null;
    if (routeStore) cleanups.push(() => routeStore.close());
    const engine = createAccountEngines({
      db,
      ...(routeStore ? { routeDb: routeStore.db } : {}),
      accounts: opts.accounts ?? [{ name: DEFAULT_ACCOUNT, client: opts.client, maxCallsInParallel: daemon.maxCallsInParallel }],
      clock,
      logger,
      instanceId,
      settleSeconds: daemon.unknownAttemptSettleSeconds,
      serverTimezone: daemon.api.serverTimezone,
      webhooksEnabled: opts.webhookSecret() !== undefined,
      keepTranscripts: daemon.results?.keepTranscripts ?? true,
      predial: { post: predial.post, secret: (name) => secretOf(name) || undefined },
      ...(perAccount ? { held, lostGraceMs: STANDBY_GRACE_MS } : {}),
      ...(shared && !perAccount
        ? {
            lease: {
              holds: () => elector?.holds() ?? false,
              token: () => elector?.token() ?? null,
              lost: () => elector?.lost('the database refused a claim under this lease'),
            },
          }
        : {}),
      metrics: {
        callPlaced: (campaign) => metrics.callsPlaced.inc({ campaign }),
        outcome: (campaign, cls) => metrics.callOutcomes.inc({ campaign, class: cls }),
        liveCalls: (campaign, n) => metrics.liveCalls.set({ campaign }, n),
        daemonLiveCalls: (n) => metrics.daemonLiveCalls.set(n),
        budget: (campaign, spent, paused) => {
          metrics.budgetSpent.set({ campaign }, spent);
          metrics.budgetPaused.set({ campaign }, paused ? 1 : 0);
        },
        confirming: (campaign, n) => metrics.leadsConfirming.set({ campaign }, n),
        unknownAttempt: () => metrics.attemptsUnknown.inc(),
        predialCheck: (campaign, result) => metrics.predialChecks.inc({ campaign, result }),
      },
    });
    metrics.setDaemonMaxCalls(daemon.maxCallsInParallel);
    let currentConfig = opts.config;
    /**
     * What only the active instance does besides dialing: reading remote leads and erasing
     * expired results (doing either twice would only cost). Returns how to stop them.
     */
    const startSideDuties = (): (() => void) => {
      const stops: (() => void)[] = [];
      if (opts.leadSource) {
        stops.push(
          startRemoteLeadSync({
            db,
            source: opts.leadSource,
            campaigns: () => currentConfig.campaigns,
            clock,
            logger,
            onNewLeads: () => engine.wake(),
          }),
        );
      }
      // Personal data past results.retention_days is erased on a timer of its own.
      const retentionDays = daemon.results?.retentionDays ?? null;
      if (retentionDays !== null) stops.push(startRetentionSweeps({ db, clock, logger, retentionDays }));
      return () => stops.splice(0).forEach((stop) => stop());
    };
    let stopSideDuties: (() => void) | null = null;
    cleanups.push(async () => stopSideDuties?.());

    /** Each account's state as the heartbeat and /readyz report it: a token file that cannot be read counts as rejected. */
    const accountStates = (): DaemonAccount[] => {
      const problem = opts.tokenProblem?.();
      return engine.accounts().map((a): DaemonAccount => {
        const facts = a.name === DEFAULT_ACCOUNT && !opts.accountFacts ? { requests: requestsOf(opts.apiCounters?.()), tokenProblem: problem } : opts.accountFacts?.(a.name);
        const missing = facts?.tokenProblem;
        return { name: a.name, api: missing ? 'token-rejected' : a.api, apiDetail: missing ?? a.apiDetail, requests: facts?.requests ?? { sent: 0, rateLimited: 0 } };
      });
    };

    let httpServer: HttpServerHandle | null = null;
    if (opts.http !== false) {
      // On PostgreSQL the API answers on connections of its own: its requests on the engine's
      // one connection (a lead POST is some ten round trips) would queue the dial loop's claims
      // behind them. SQLite's one connection answers each statement at once.
      const apiStore = shared ? await openConfiguredStore({ ...daemon, database: opts.databaseFile ?? daemon.database }, process.env, { ...storeOptions, maxConnections: API_CONNECTIONS }) : store;
      if (apiStore !== store) cleanups.push(() => apiStore.close());
      // Leads posted a few at a time keep the planner's picture of the campaigns current.
      const statistics = statisticsRefresher(apiStore.db, (err) => logger.warn({ err: String(err) }, 'refreshing the planner statistics after posted leads failed'));
      cleanups.push(() => statistics.settled());
      // On SQLite the GET routes read on a read-only connection of their own: on the one
      // writing connection a read waits for every transaction ahead of it (a group commit of
      // the dial loop, a lead POST), while a WAL reader never waits for the writer.
      const readStore = !shared && store.file !== ':memory:' ? await openStore(store.file, { readonly: true }) : null;
      if (readStore) cleanups.push(() => readStore.close());
      httpServer = await startHttpServer({
        host: daemon.http.host,
        port: daemon.http.port,
        logger,
        metrics,
        clock,
        ready: async () => {
          let database: 'ok' | 'unavailable' = 'ok';
          try {
            await probeCampaigns(db);
          } catch {
            database = 'unavailable';
          }
          return readiness({ database, accounts: accountStates(), tokenProblem: opts.tokenProblem?.() });
        },
        webhook: {
          secret: opts.webhookSecret,
          handle: async (payload, receivedAt) => engine.handleWebhook(payload, receivedAt),
        },
        dashboard: createDashboard({
          db,
          clock,
          logger,
          guard: createGuard({ token: opts.dashboardToken || undefined, db, clock }),
          version: opts.version,
          hostname: os.hostname(),
          isPidAlive: pidAlive,
          rateLimit: daemon.api.rateLimit,
          onStateChanged: () => engine.wake(),
          // Uploaded lead files are staged in the system's temporary directory while imported.
          stagingDir: os.tmpdir(),
        }),
        api: createApi(
          {
            db: apiStore.db,
            ...(readStore ? { readDb: readStore.db } : {}),
            clock,
            logger,
            wake: () => engine.wake(),
            leadsStored: (campaignId, count) => statistics.rowsWritten(campaignId, count),
            authorize: createAuthorizer({ db: apiStore.db, ...(readStore ? { readDb: readStore.db } : {}), clock, loopback: isLoopback(daemon.http.host) }),
            version: opts.version,
            hostname: os.hostname(),
            isPidAlive: pidAlive,
          },
          apiRoutes,
        ),
      });
      cleanups.push(() => httpServer!.close());
    }
    // Only now, with the port bound: a daemon that cannot listen (the port is taken) must
    // fail before it dials, or a supervisor restarting it would place calls on each try
    // whose webhooks nobody receives. And before the first call: the assistants learn where
    // to send their webhooks (webhook.register), or the first calls' outcomes come only by polling.
    // With several active instances, each account's set-up is done by the instance that takes
    // it, with that account's budget: a joining instance setting every account's assistants
    // spent requests on the tokens other instances were dialing at their full rate, and the
    // service refused their next make_call (429) each time an instance started.
    const registersAtTake = perAccount;
    if (!registersAtTake) await opts.beforeDialing?.(httpServer?.port ?? null);
    if (shared) {
      // The lease on a connection of its own: a long transaction on the engine's must not delay renewals.
      const leaseStore = await openConfiguredStore({ ...daemon, database: opts.databaseFile ?? daemon.database }, process.env, storeOptions);
      cleanups.push(() => leaseStore.close());
      if (perAccount) {
        const manager = createAccountLeaseManager({
          port: storeAccountLeasePort(leaseStore.db, { instanceId, leaseMs }),
          instanceId,
          leaseMs,
          clock,
          logger,
          // The accounts in the file (as reloaded) that this process has an engine for: one
          // removed is handed over; one added needs a restart, as its client does.
          accounts: () => {
            const inFile = new Set((currentConfig.daemon.accounts ?? []).map((a) => a.name));
            return engine.accounts().map((a) => a.name).filter((name) => inFile.has(name));
          },
          handover: (account) => engine.handover(account),
          ...(opts.accountBudgets ? { budgets: opts.accountBudgets } : {}),
        });
        leases = manager;
        const unfollow = manager.held.onChange((change) => {
          if (change.kind !== 'taken') return;
          opts.beforeDialing?.(httpServer?.port ?? null, [change.account]).catch((err: unknown) => logger.warn({ account: change.account, err: String(err) }, 'set-up of a taken account failed'));
        });
        cleanups.push(async () => unfollow());
        // Runs before the one lease's release and the lease connection's close (last in,
        // first out): every account is handed over, so the others take them at their next round.
        cleanups.push(() => manager.stop());
      }
      let wakeups: WakeupListener | null = null;
      cleanups.push(async () => wakeups?.close());
      const target = opts.databaseFile ?? daemon.database;
      const password = await storePassword(target, process.env, daemon.databasePasswordFile);
      const roles = createRoleSwitch({
        logger,
        becomeActive: async () => {
          if (!perAccount) await engine.becomeActive();
          await hooks.setSending(true);
          stopSideDuties ??= startSideDuties();
          wakeups ??= listenForFreedSlots({ url: target, ...(password !== undefined ? { password } : {}), clock, logger, onWake: () => engine.wake() });
          metrics.instanceActive.set(1);
        },
        becomeStandby: async () => {
          metrics.instanceActive.set(0);
          // Claims already stopped (the dial loop asks the lease); in-flight requests get a moment.
          if (!perAccount) await engine.becomeStandby(STANDBY_GRACE_MS);
          await hooks.setSending(false);
          stopSideDuties?.();
          stopSideDuties = null;
          // Per account every instance dials: each listens for freed slots whatever its role.
          if (!perAccount) {
            await wakeups?.close();
            wakeups = null;
          }
        },
      });
      if (perAccount) wakeups = listenForFreedSlots({ url: target, ...(password !== undefined ? { password } : {}), clock, logger, onWake: () => engine.wake() });
      elector = createElector({
        lease: {
          take: () => takeLease(leaseStore.db, instanceId, leaseMs),
          renew: (token) => renewLease(leaseStore.db, instanceId, token, leaseMs),
          release: (token) => releaseLease(leaseStore.db, instanceId, token),
        },
        leaseMs,
        clock,
        logger,
        onActive: () => roles.set('active'),
        onStandby: () => roles.set('standby'),
      });
      const theElector = elector;
      // Released last (cleanups run last in, first out): after the engine stopped dialing.
      cleanups.push(async () => {
        await theElector.stop();
        await roles.settled();
      });
      metrics.instanceActive.set(0);
      await engine.start({ standby: true });
      theElector.start();
      leases?.start();
    } else {
      metrics.instanceActive.set(1);
      stopSideDuties = startSideDuties();
      await engine.start();
    }
    cleanups.push(() => engine.stop(0));
    // success_when judged under a new or changed rule while the campaigns dial (sync-config.ts).
    let judgingStopped = false;
    let judging: Promise<void> = Promise.resolve();
    const judgeInBackground = (jobs: readonly SuccessJudging[]): void => {
      if (jobs.length === 0) return;
      judging = judging
        .then(() => judgeSuccesses(db, jobs, logger, () => judgingStopped))
        .catch((err: unknown) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'success_when judging stopped; status judges the calls itself until the next start or reload'));
    };
    cleanups.push(async () => {
      judgingStopped = true;
      await judging;
    });
    judgeInBackground(judgingAtStart);

    /** Whether this instance dials the account now: its lease per account, else the one lease (always on SQLite). */
    const dialsAccount = (account: string): boolean => (perAccount ? held.holds(account) : shared ? (elector?.holds() ?? false) : true);
    metrics.watchAccounts(() => accountStates().map((a) => ({ account: a.name, dialing: dialsAccount(a.name), apiOk: a.api === 'ok' })));
    const beat = async (): Promise<void> => {
      const api = engine.status();
      const problem = opts.tokenProblem?.();
      await heartbeat(db, instanceId, {
        now: clock.now(),
        apiStatus: problem ? 'token-rejected' : api.api,
        apiDetail: problem ?? api.apiDetail,
        ...(opts.tokenSource ? { tokenSource: opts.tokenSource() } : {}),
        ...(opts.apiCounters ? { api: opts.apiCounters() } : {}),
        accounts: accountStates(),
      });
    };
    await beat();
    // Periodic work stops for good once stopping starts, even if a run was under way.
    let timersStopped = false;
    cleanups.push(async () => {
      timersStopped = true;
    });
    let cancelBeat = (): void => {};
    const scheduleBeat = (): void => {
      if (timersStopped) return;
      cancelBeat = clock.setTimer(HEARTBEAT_MS, () => {
        beat()
          .catch((err: unknown) => logger.warn({ err: String(err) }, 'heartbeat failed'))
          .finally(scheduleBeat);
      });
    };
    scheduleBeat();
    cleanups.push(async () => cancelBeat());
    // The WAL is folded into the database file here, between claims, not inside them.
    let cancelCheckpoint = (): void => {};
    const scheduleCheckpoint = (): void => {
      if (timersStopped) return;
      cancelCheckpoint = clock.setTimer(CHECKPOINT_MS, () => {
        store
          .checkpoint()
          .catch((err: unknown) => logger.warn({ err: String(err) }, 'checkpoint failed'))
          .finally(scheduleCheckpoint);
      });
    };
    scheduleCheckpoint();
    cleanups.push(async () => cancelCheckpoint());

    let stopped: Promise<void> | null = null;
    return {
      db,
      engine,
      metrics,
      httpPort: httpServer?.port ?? null,
      ownAccounts: () => (perAccount ? held.list().map((h) => h.account) : undefined),
      async reload(config) {
        currentConfig = config;
        judgeInBackground(await withSetupLock(db, (conn) => syncConfig(conn, config, opts, listAssistants), setupLock));
        await hooks.reload(config.daemon);
        await engine.reload();
        await beat();
      },
      stop(graceMs = 10_000) {
        stopped ??= (async () => {
          timersStopped = true;
          cancelBeat();
          await engine.stop(graceMs);
          await runCleanups();
        })();
        return stopped;
      },
    };
  } catch (err) {
    await runCleanups();
    throw err;
  }
}

function requestsOf(counters: ApiCounters | undefined): DaemonAccount['requests'] {
  return { sent: counters?.sent ?? 0, rateLimited: counters?.rateLimited ?? 0 };
}

async function syncConfig(db: Kysely<Database>, config: LoadedConfig, opts: AppOptions, listAssistants: 'always' | 'when-needed'): Promise<SuccessJudging[]> {
  const now = opts.clock.now();
  const lanes = opts.accounts;
  const accountNames = lanes?.map((a) => ({ name: a.name })) ?? [];
  const judging = await syncCampaigns(db, config, {
    now,
    judge: 'later',
    client: opts.client,
    logger: opts.logger,
    listAssistants,
    // Several accounts: a campaign's assistant is checked with its own account's token.
    ...(lanes && lanes.length > 1 ? { clientOf: (cfg) => lanes.find((a) => a.name === campaignAccount(cfg, accountNames))?.client ?? opts.client } : {}),
  });
  await syncSuppressionList(db, config.daemon, { now, logger: opts.logger });
  await syncLeadFiles(db, config, { now, logger: opts.logger });
  return judging;
}

import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

// Every metric lives on a registry owned by one Metrics object, never prom-client's
// global one: two daemons in one process (tests, the demo) must not share counters,
// and registering the same name twice on the global registry throws.

/** Webhook delivery results counted by `campaignd_webhook_deliveries_total`. */
export type WebhookResult = 'accepted' | 'unmatched' | 'refused' | 'invalid';

/** The daemon's Prometheus metrics; the engine, the service client and the HTTP surface update them. */
export interface Metrics {
  /** The registry `/metrics` serves. */
  readonly registry: Registry;
  /** make_call requests answered 2xx, by campaign. */
  readonly callsPlaced: Counter<'campaign'>;
  /** Final attempt outcomes, by campaign and outcome class (success, voicemail, busy…). */
  readonly callOutcomes: Counter<'campaign' | 'class'>;
  /** Attempts holding a live-call slot right now, by campaign. */
  readonly liveCalls: Gauge<'campaign'>;
  /** A budgeted campaign's known spending, and whether a budget cap holds it (1) or not (0). */
  readonly budgetSpent: Gauge<'campaign'>;
  readonly budgetPaused: Gauge<'campaign'>;
  /** Attempts holding a live-call slot right now, over all campaigns (what the daemon-wide limit counts). */
  readonly daemonLiveCalls: Gauge;
  /**
   * Shows the daemon-wide max_calls_in_parallel as `campaignd_daemon_max_calls_in_parallel`;
   * undefined (not set) leaves the gauge out, since 0 would read as a limit of no calls.
   */
  setDaemonMaxCalls(max: number | undefined): void;
  /** Completed leads whose webhook success the call list has not confirmed yet (`confirming` in status), by campaign. */
  readonly leadsConfirming: Gauge<'campaign'>;
  /** Requests to the service, by endpoint and HTTP status (or "error" for network failures). */
  readonly apiRequests: Counter<'endpoint' | 'status'>;
  /** 429 answers from the service. */
  readonly apiRateLimited: Counter;
  /** Seconds spent waiting for the shared rate budget. */
  readonly rateBudgetWait: Counter;
  /** Requests to the service by account (README, "Many accounts"); each account has its own budget. */
  readonly accountRequests: Counter<'account'>;
  /** 429 answers from the service by account. */
  readonly accountRateLimited: Counter<'account'>;
  /**
   * Where `campaignd_account_dialing` and `campaignd_account_api_ok` are read from, at each
   * scrape: each account's state as the daemon knows it now, not as of its last heartbeat.
   */
  watchAccounts(source: () => readonly AccountGauges[]): void;
  /** Post-call webhook deliveries by result. */
  readonly webhookDeliveries: Counter<'result'>;
  /** Attempts whose make_call ended in a timeout, 5xx or broken connection (rule 6). */
  readonly attemptsUnknown: Counter;
  /** Hook deliveries by hook URL and result (delivered, failed). */
  readonly hookDeliveries: Counter<'hook' | 'result'>;
  /** Pre-dial checks by campaign and result (call, cancel, defer, failed). */
  readonly predialChecks: Counter<'campaign' | 'result'>;
  /** Undelivered hook events, by hook URL. */
  readonly hookBacklog: Gauge<'hook'>;
  /** Age of the oldest undelivered hook event in seconds, by hook URL. */
  readonly hookOldestSeconds: Gauge<'hook'>;
  /** 1 while this instance is the active one (claims and dials), 0 while it stands by (docs/design.md §10). */
  readonly instanceActive: Gauge;
}

/** One account as its gauges show it. */
export interface AccountGauges {
  account: string;
  /**
   * This instance dials the account now: it holds the account's lease (several active
   * instances) or is the active instance (one lease, or SQLite). Summed over the instances,
   * each account reads 1: 0 is an account nobody dials, 2 a takeover under way.
   */
  dialing: boolean;
  /** The service accepts the account's token and answers (api "ok"). */
  apiOk: boolean;
}

/** Creates the metrics on a fresh registry, with Node's default process metrics. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'campaignd_' });
  const registers = [registry];
  // Registered only while a limit is set (setDaemonMaxCalls).
  const DAEMON_MAX_CALLS = 'campaignd_daemon_max_calls_in_parallel';
  const daemonMaxCalls = new Gauge({
    name: DAEMON_MAX_CALLS,
    help: "The daemon's max_calls_in_parallel: live calls allowed over all campaigns (absent when not set).",
    registers: [],
  });
  let accounts: () => readonly AccountGauges[] = () => [];
  new Gauge({
    name: 'campaignd_account_dialing',
    help: 'Whether this instance dials the account now (1: it holds the account, or is the active instance) or not (0), by account.',
    labelNames: ['account'],
    registers,
    collect() {
      this.reset();
      for (const a of accounts()) this.set({ account: a.account }, a.dialing ? 1 : 0);
    },
  });
  new Gauge({
    name: 'campaignd_account_api_ok',
    help: "Whether the service accepts the account's token and answers (1) or not (0), by account.",
    labelNames: ['account'],
    registers,
    collect() {
      this.reset();
      for (const a of accounts()) this.set({ account: a.account }, a.apiOk ? 1 : 0);
    },
  });
  return {
    registry,
    watchAccounts(source) {
      accounts = source;
    },
    setDaemonMaxCalls(max) {
      registry.removeSingleMetric(DAEMON_MAX_CALLS);
      if (max === undefined) return;
      registry.registerMetric(daemonMaxCalls);
      daemonMaxCalls.set(max);
    },
    daemonLiveCalls: new Gauge({
      name: 'campaignd_daemon_live_calls',
      help: 'Attempts holding a live-call slot over all campaigns (counted against the daemon-wide max_calls_in_parallel).',
      registers,
    }),
    callsPlaced: new Counter({
      name: 'campaignd_calls_placed_total',
      help: 'Calls placed (make_call answered 2xx), by campaign.',
      labelNames: ['campaign'],
      registers,
    }),
    callOutcomes: new Counter({
      name: 'campaignd_call_outcomes_total',
      help: 'Final attempt outcomes, by campaign and outcome class.',
      labelNames: ['campaign', 'class'],
      registers,
    }),
    instanceActive: new Gauge({
      name: 'campaignd_instance_active',
      help: 'Whether this instance is the active one that claims and dials (1) or a standby (0); always 1 on SQLite.',
      registers,
    }),
    budgetSpent: new Gauge({
      name: 'campaignd_budget_spent',
      help: "Known cost of a budgeted campaign's calls so far, in the service's currency, by campaign.",
      labelNames: ['campaign'],
      registers,
    }),
    budgetPaused: new Gauge({
      name: 'campaignd_budget_paused',
      help: 'Whether a budget cap holds the campaign (1) or not (0), by campaign.',
      labelNames: ['campaign'],
      registers,
    }),
    liveCalls: new Gauge({
      name: 'campaignd_live_calls',
      help: 'Attempts holding a live-call slot, by campaign.',
      labelNames: ['campaign'],
      registers,
    }),
    leadsConfirming: new Gauge({
      name: 'campaignd_leads_confirming',
      help: 'Completed leads whose webhook success awaits the call list (it may still be a voicemail), by campaign.',
      labelNames: ['campaign'],
      registers,
    }),
    apiRequests: new Counter({
      name: 'campaignd_api_requests_total',
      help: 'Requests to the Voice Assistant Calling Service, by endpoint and HTTP status.',
      labelNames: ['endpoint', 'status'],
      registers,
    }),
    apiRateLimited: new Counter({
      name: 'campaignd_api_rate_limited_total',
      help: 'Answers 429 (too many requests) from the service.',
      registers,
    }),
    rateBudgetWait: new Counter({
      name: 'campaignd_rate_budget_wait_seconds_total',
      help: 'Seconds spent waiting for the shared request budget.',
      registers,
    }),
    accountRequests: new Counter({
      name: 'campaignd_account_requests_total',
      help: 'Requests to the Voice Assistant Calling Service, by account.',
      labelNames: ['account'],
      registers,
    }),
    accountRateLimited: new Counter({
      name: 'campaignd_account_rate_limited_total',
      help: 'Answers 429 (too many requests) from the service, by account.',
      labelNames: ['account'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'campaignd_webhook_deliveries_total',
      help: 'Post-call webhook deliveries: accepted, unmatched (no such call), refused (secret), invalid (body).',
      labelNames: ['result'],
      registers,
    }),
    hookDeliveries: new Counter({
      name: 'campaignd_hook_deliveries_total',
      help: 'Hook deliveries by hook URL and result: delivered (2xx) or failed (retried later).',
      labelNames: ['hook', 'result'],
      registers,
    }),
    predialChecks: new Counter({
      name: 'campaignd_predial_checks_total',
      help: 'Pre-dial checks by campaign and result: call (approved), cancel (refused with a reason), defer (retry_after_seconds), failed (timeout, error, non-2xx or an answer not understood; the lead waits).',
      labelNames: ['campaign', 'result'],
      registers,
    }),
    hookBacklog: new Gauge({
      name: 'campaignd_hook_backlog',
      help: 'Hook events not delivered yet, by hook URL.',
      labelNames: ['hook'],
      registers,
    }),
    hookOldestSeconds: new Gauge({
      name: 'campaignd_hook_oldest_undelivered_seconds',
      help: 'Age of the oldest undelivered hook event, by hook URL (0 when none).',
      labelNames: ['hook'],
      registers,
    }),
    attemptsUnknown: new Counter({
      name: 'campaignd_attempts_unknown_total',
      help: 'Attempts whose make_call outcome is unknown (timeout, 5xx, broken connection, crash).',
      registers,
    }),
  };
}

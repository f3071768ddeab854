import { campaignAccount } from '../config/accounts.js';
import { createEngine, type Engine, type EngineOptions, type EngineStatus } from './engine.js';
import type { EngineClient } from './ports.js';
import { deliveryAttempt, handleWebhookPayload, type WebhookResult } from './webhook.js';
import type { HeldAccounts } from '../ha/held-accounts.js';
import { createRoleSwitch, type RoleSwitch } from '../ha/role-switch.js';
import { createAccountDialing, type AccountDialing } from './account-dialing.js';
import { createCampaignCatalog } from './campaign-catalog.js';
import { createGroupCommit } from '../store/group-commit.js';
import { CONTROL_CHECK_MS } from './policy.js';
import { createInboxDrain } from './inbox-drain.js';
import { queueForHolder } from '../store/webhook-inbox.js';
import type { LeaseView } from './loops/dial-loop.js';
import type { Kysely } from 'kysely';
import type { Database } from '../store/types.js';

// Many accounts in one daemon (README, "Many accounts"): one engine per account, each with
// its own client (so its own rate budget, X-RateLimit-* and 429 state), its own service
// state (a rejected token stops only its campaigns), its own dial loop under its own
// live-call cap and its own poller over its own calls. One account's limiter or errors
// therefore never hold back another's: the loops share nothing but the database.
// Several active instances on PostgreSQL (docs/several-instances.md): `held` says which
// accounts this instance holds now. Every engine then starts standing by; an account's engine
// takes up dialing, its call list and its remote campaigns when the account is taken
// (recovering only what its previous holders left), and gives them up when it is handed
// over or lost. Its claims carry the account's fence, so the database refuses any claim
// made after another instance took the account. A webhook reaching an instance that does
// not hold its account is queued for the holder (webhook-inbox.ts), which applies it: each
// account's campaigns have one writer, so instances never wait on each other's rows.

export interface AccountLane {
  name: string;
  client: EngineClient;
  maxCallsInParallel?: number | undefined;
}

export interface AccountEnginesOptions extends Omit<EngineOptions, 'client' | 'accountMaxCalls' | 'account'> {
  accounts: readonly AccountLane[];
  /** The accounts this daemon dials (default: all). */
  dials?: ReadonlySet<string>;
  /** Several active instances: the accounts this instance holds (the lease manager's); absent: every account, always. */
  held?: HeldAccounts;
  /** How long a lost account's make_call requests are given to finish when its engine stops dialing. */
  lostGraceMs?: number;
  /**
   * With `held`: where a delivery's account is looked up and a delivery for another
   * instance's account queued, and the queue read (default `db`). Reads and the queue only:
   * the campaigns are written on `db`.
   */
  routeDb?: Kysely<Database>;
}

/** One account's state as `status` shows it. */
export interface AccountState extends EngineStatus {
  name: string;
}

export type AccountEngines = Omit<Engine, 'webhookContext' | 'webhookReceived'> & {
  accounts(): AccountState[];
  account(name: string): Engine | undefined;
  /**
   * The lease manager's `handover` (with `held`): stops dialing `account` and awaits its
   * make_call requests in flight (the manager bounds the wait).
   */
  handover(account: string): Promise<void>;
};

/** How often the deliveries queued for the accounts held are looked for: a slot waits at most this long for its webhook. */
const INBOX_SWEEP_MS = 200;
/** After this long without a holder, an account's queued deliveries are applied by any instance (inbox-drain.ts). */
const INBOX_STRANDED_MS = 30_000;

/** What an account's dial loop knows of its lease: held or not, and the fence its claims carry. */
function accountLeaseView(dialing: AccountDialing, account: string): LeaseView {
  return {
    holds: () => dialing.mayDial(account),
    token: () => null,
    lost: () => undefined,
    accountFence: () => dialing.claimFence(account),
    refused: (err) => dialing.refused(err),
    track: (request) => dialing.track(account, request),
  };
}

export function createAccountEngines(opts: AccountEnginesOptions): AccountEngines {
  const { accounts, dials, held, lostGraceMs, routeDb = opts.db, ...shared } = opts;
  const dialing = held ? createAccountDialing(held) : null;
  const lanes = accounts.filter((a) => !dials || dials.has(a.name));
  if (lanes.length === 0) throw new Error('no account to dial');
  // One account: the engine as it always was (no filter, no account in its logs).
  const several = accounts.length > 1;
  // Several: one catalog of the campaigns for all the engines, each dialing its own.
  const catalog = several ? createCampaignCatalog(shared.db, shared.logger.child({ component: 'engine' }), { now: () => shared.clock.now(), checkEveryMs: CONTROL_CHECK_MS }) : undefined;
  // And one group commit: the accounts' work of one turn of the event loop, their claims
  // included, shares a commit. A failing item fails alone (group-commit.ts), so one
  // account's claim refused by its fence never fails another's. With several active
  // instances (`held`) too: each instance writes only the campaigns of the accounts it
  // holds (a delivery for another's is queued for it, handleWebhook), so two instances'
  // batches share no campaign's rows and cannot deadlock on them. When deliveries were
  // applied where they arrived, two instances wrote the same campaigns' counter rows in
  // opposite orders and PostgreSQL broke the deadlocks after a second each; one commit per
  // account avoided that only by putting 67 accounts' transactions in series on the
  // instance's one connection (3 instances, 200 accounts: 99 requests/s of 333).
  const commit = several ? createGroupCommit(shared.db, { durableApart: held !== undefined }) : undefined;
  // The daemon's live calls are every account's: each engine counts its own, the gauge their sum.
  const liveByAccount = new Map<string, number>();
  const metricsOf = (account: string): EngineOptions['metrics'] => {
    const m = shared.metrics;
    if (!several || !m?.daemonLiveCalls) return m;
    return {
      ...m,
      daemonLiveCalls: (n) => {
        liveByAccount.set(account, n);
        m.daemonLiveCalls!([...liveByAccount.values()].reduce((a, b) => a + b, 0));
      },
    };
  };
  const engines = new Map<string, Engine>(
    lanes.map((a) => [
      a.name,
      createEngine({
        ...shared,
        client: a.client,
        accountMaxCalls: a.maxCallsInParallel,
        metrics: metricsOf(a.name),
        ...(dialing ? { lease: accountLeaseView(dialing, a.name) } : {}),
        ...(several ? { account: { name: a.name, dials: (c) => campaignAccount(c.config, accounts) === a.name }, catalog, commit } : {}),
      }),
    ]),
  );
  const all = [...engines.values()];
  const first = all[0]!;
  const firstName = lanes[0]!.name;
  const each = async (fn: (e: Engine) => Promise<void>): Promise<void> => {
    await Promise.all(all.map(fn));
  };

  // One role per account, changed one step after the other (taken → dialing; handed over or
  // lost → standing by), so a quick lost-then-taken never leaves two dial loops or none.
  const roles = new Map<string, RoleSwitch>(
    [...engines].map(([name, engine]) => [
      name,
      createRoleSwitch({
        logger: shared.logger.child({ account: name }),
        async becomeActive() {
          // Taken and lost again before this step ran: nothing to dial under.
          const fence = held?.fence(name) ?? null;
          if (fence !== null) await engine.becomeActive({ account: name, fence });
          // What other instances queued while the account was someone else's, or no one's.
          inbox?.drain(name);
        },
        becomeStandby: () => engine.becomeStandby(lostGraceMs),
      }),
    ]),
  );
  let unfollow = (): void => undefined;
  function followHeld(): void {
    if (!held) return;
    unfollow = held.onChange((change) => {
      const role = roles.get(change.account);
      if (change.kind === 'taken') role?.set('active');
      else if (change.kind === 'lost') role?.set('standby');
    });
    // Accounts taken before the engines started.
    for (const { account } of held.list()) roles.get(account)?.set('active');
  }

  /** Applies a delivery in `account`'s engine, routed on by the attempt it names (as handleWebhook does). */
  async function applyDelivery(account: string, engine: Engine, payload: unknown, receivedAt: number, alongside?: Parameters<typeof handleWebhookPayload>[4]): Promise<WebhookResult> {
    let [name, lane] = [account, engine];
    const result = await handleWebhookPayload(
      engine.webhookContext,
      payload,
      receivedAt,
      (attempt) => {
        [name, lane] = laneOf(attempt.campaign_id) ?? [name, lane];
        return lane.webhookContext;
      },
      alongside,
    );
    if (!result.invalid) lane.webhookReceived(receivedAt);
    return { ...result, account: name };
  }

  const inbox = held
    ? createInboxDrain({
        db: routeDb,
        clock: shared.clock,
        logger: shared.logger,
        everyMs: INBOX_SWEEP_MS,
        strandedAfterMs: INBOX_STRANDED_MS,
        holds: (account) => held.holds(account),
        apply: (account, payload, receivedAt, remove) => applyDelivery(account, engines.get(account) ?? first, payload, receivedAt, remove),
      })
    : null;

  /** The account whose campaign it is (its engine records the delivery); undefined: none of ours. */
  function laneOf(campaignId: number): [string, Engine] | undefined {
    for (const lane of engines) if (lane[1].owns(campaignId)) return lane;
    return undefined;
  }

  return {
    async start(role = {}) {
      await each((e) => e.start(held ? { standby: true } : role));
      followHeld();
      inbox?.start();
    },
    async stop(graceMs) {
      unfollow();
      await inbox?.stop();
      await each((e) => e.stop(graceMs));
      await Promise.all([...roles.values()].map((r) => r.settled()));
    },
    async handover(account) {
      const role = roles.get(account);
      if (!role) return;
      role.set('standby');
      await role.settled();
      await dialing?.drain(account);
    },
    async becomeActive() {
      await each((e) => e.becomeActive());
    },
    async becomeStandby(graceMs) {
      await each((e) => e.becomeStandby(graceMs));
    },
    isActive: () => all.some((e) => e.isActive()),
    async reload() {
      await each((e) => e.reload());
    },
    /**
     * A delivery is applied by the account whose call it is: the attempt the delivery names
     * (by call id, else the live attempt on its number) → its campaign → its account, found
     * by the one lookup that applies it. Its dial loop learns of the freed slot; a delivery
     * no account's call matches is counted by the first.
     */
    async handleWebhook(payload, receivedAt): Promise<WebhookResult> {
      if (!held) {
        if (all.length > 1) return applyDelivery(firstName, first, payload, receivedAt);
        const result = await first.handleWebhook(payload, receivedAt);
        return several ? { ...result, account: firstName } : result;
      }
      // Several active instances: the account the delivery's call is of, found before any
      // write. Held by another instance: queued for it, the one writer of its campaigns.
      // Else (held here, or by no one) applied here.
      const attempt = await deliveryAttempt({ ...first.webhookContext, db: routeDb }, payload, receivedAt);
      const [name, engine] = (attempt && laneOf(attempt.campaign_id)) ?? [firstName, first];
      if (attempt && !held.holds(name) && (await queueForHolder(routeDb, { account: name, instance: shared.instanceId, receivedAt, payload: JSON.stringify(payload) }))) {
        return { accepted: true, detail: 'queued for the instance holding the account', account: name };
      }
      return applyDelivery(name, engine, payload, receivedAt);
    },
    async tokenChanged() {
      await each((e) => e.tokenChanged());
    },
    /** The daemon's API state: ok while every account's is; else the first account in trouble, named. */
    status(): EngineStatus {
      if (!several) return first.status();
      const bad = [...engines].find(([, e]) => e.status().api !== 'ok');
      if (!bad) return first.status();
      const [name, e] = bad;
      const s = e.status();
      return { api: s.api, apiDetail: `account ${name}: ${s.apiDetail ?? s.api}` };
    },
    owns: (id) => all.some((e) => e.owns(id)),
    inflight: () => all.reduce((n, e) => n + e.inflight(), 0),
    wake() {
      for (const e of all) e.wake();
    },
    accounts: () => [...engines].map(([name, e]) => ({ name, ...e.status() })),
    account: (name) => engines.get(name),
  };
}

import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { balanceAccounts } from './account-balance.js';
import { leaseMargin } from './elector.js';
import { createHeldAccounts, type HeldAccounts, type HeldEntry } from './held-accounts.js';

// Which accounts this instance dials (several active instances on PostgreSQL;
// docs/several-instances.md). Every `leaseMs / 3` a round:
//   1. says this instance takes part (its row in lease_instances, renewed like a lease);
//   2. renews every lease it holds in one statement; one not renewed is lost at once;
//   3. reads every lease and the live instances, asks the balancer (account-balance.ts),
//      takes the unheld or expired accounts it should, and begins handing over one it
//      should give up.
// A round also comes early when another instance's lease or row is about to expire, so an
// account of a dead instance is taken about when its lease runs out, not up to a third of a
// lease later: a takeover stays within `lease_seconds` plus a round trip.
//
// A handover never double-dials: the account stops counting as held (no new claims), the
// engine awaits its make_call requests in flight (`handover`), and only then is the lease
// released; it is renewed meanwhile. The taker's claims carry a new fence, and the database
// refuses any claim made under the old one (migration 0023).

/** The lease operations the manager needs (account-lease-port.ts binds them to the store). */
export interface AccountLeasePort {
  /** Says this instance takes part for another lease. */
  beat(): Promise<void>;
  /** The live instances and every account's lease, with the milliseconds each has left. */
  read(): Promise<{
    instances: { id: string; remainingMs: number }[];
    leases: { account: string; holder: string | null; live: boolean; remainingMs: number }[];
  }>;
  /** Takes an unheld or expired account: its new fence, or null when another holds it. */
  acquire(account: string): Promise<number | null>;
  /** Renews the given leases; returns the accounts renewed. */
  renew(leases: { account: string; fence: number }[]): Promise<Set<string>>;
  release(account: string, fence: number): Promise<boolean>;
  /** Leaves at a clean stop, after every account was released. */
  leave(): Promise<void>;
  /** Writes the requests of the last minute of accounts held under these fences (ages in ms), for the next holder. */
  saveRequests?(entries: { account: string; fence: number; ages: number[] }[]): Promise<void>;
  /** The requests the account's previous holders last wrote, as ages in ms now. */
  readRequests?(account: string): Promise<number[]>;
}

/**
 * Each account's request budget, handed from holder to holder: the service counts an
 * account's requests whoever sent them, so a taker whose budget started empty would spend
 * the burst the previous holder had just spent, and get 429s (each trip of the live limiter
 * costs the account a minute of dialing).
 */
export interface AccountBudgets {
  /** The account's requests of the last minute, as ages in ms. */
  ages(account: string): number[];
  /** Counts the previous holders' requests (ages in ms) before this instance dials the account. */
  seed(account: string, ages: readonly number[]): void;
  /** The account was handed on with its record: its budget forgets what the record holds. */
  handedOn(account: string): void;
}

export interface AccountLeaseManagerOptions {
  port: AccountLeasePort;
  instanceId: string;
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  /** The accounts to share (the config's, as reloaded). */
  accounts(): readonly string[];
  /** Stops claiming for `account` (already true: it no longer counts as held) and awaits its make_call requests in flight. */
  handover(account: string): Promise<void>;
  /**
   * How long a handover awaits `handover` before releasing anyway (default: half a lease, so
   * that with the taker's next round, a third of a lease, an account is never undialed for
   * longer than a takeover). A request still out then stays `dialing`, and the taker follows
   * it as unknown.
   */
  handoverGraceMs?: number;
  /** The budgets handed over with the accounts (none: each budget starts from what it saw itself). */
  budgets?: AccountBudgets;
  /** Accounts given up per round at most (default: the balancer's, a third of the fair share). */
  maxReleasesPerRound?: number;
}

export interface AccountLeaseManager {
  /** What this instance holds now: the engine's one input about accounts. */
  held: HeldAccounts;
  start(): void;
  /** Resolves once the round under way is over (tests drive time with it; handovers run beside rounds). */
  settled(): Promise<void>;
  /** Stops; hands every account over (each awaited as a handover) and leaves, so the others take them at once. */
  stop(): Promise<void>;
}

/** The earliest a round comes after the previous one. */
const MIN_ROUND_MS = 25;
/** A round meant for an expiry comes this long after it, so the database sees it expired. */
const EXPIRY_SLACK_MS = 10;

export function createAccountLeaseManager(opts: AccountLeaseManagerOptions): AccountLeaseManager {
  const { port, leaseMs, clock, instanceId: me } = opts;
  const log = opts.logger.child({ component: 'account-leases' });
  const everyMs = Math.max(50, Math.floor(leaseMs / 3));
  const margin = leaseMargin(leaseMs);
  const handoverGraceMs = opts.handoverGraceMs ?? Math.floor(leaseMs / 2);
  const held = createHeldAccounts(clock, (account, reason) => log.warn({ account, reason }, 'account lost: no longer dialing it'));
  const handovers = new Set<Promise<void>>();
  let stopped = false;
  let cancel: (() => void) | null = null;
  let round: Promise<void> = Promise.resolve();

  function lose(account: string, reason: string): void {
    held.lost(account, reason);
  }

  /** Renews every lease held; one not renewed is lost. */
  async function renewAll(asked: number): Promise<void> {
    const entries = [...held.entries()];
    for (const [account, entry] of entries) {
      if (asked >= entry.deadline) lose(account, 'the lease ran out before it could be renewed');
    }
    const mine = [...held.entries()].map(([account, e]) => ({ account, fence: e.fence }));
    if (mine.length === 0) return;
    const renewed = await port.renew(mine);
    for (const { account } of mine) {
      if (renewed.has(account)) held.extend(account, asked + leaseMs - margin);
      else lose(account, 'another instance holds the lease');
    }
    // Written at every renewal, so that a taker after a crash knows all but the last round's.
    await saveRequests(mine.filter((l) => renewed.has(l.account)));
  }

  async function saveRequests(leases: readonly { account: string; fence: number }[]): Promise<void> {
    const budgets = opts.budgets;
    if (!budgets || !port.saveRequests || leases.length === 0) return;
    await port.saveRequests(leases.map((l) => ({ ...l, ages: budgets.ages(l.account) })));
  }

  function handOver(account: string): void {
    const entry = held.beginRelease(account);
    if (!entry) return;
    log.info({ account }, 'handing the account over');
    const task = finishHandover(account, entry).finally(() => handovers.delete(task));
    handovers.add(task);
  }

  async function finishHandover(account: string, entry: HeldEntry): Promise<void> {
    const grace = new AbortController();
    try {
      const late = await Promise.race([opts.handover(account).then(() => false), clock.sleep(handoverGraceMs, grace.signal).then(() => true)]);
      if (late) log.warn({ account }, 'handover: make_call requests still in flight after the grace; the taker follows them as unknown');
    } catch (err) {
      log.warn({ account, err: errText(err) }, 'handover: the make_call requests could not all be awaited');
    } finally {
      grace.abort();
    }
    // Lost meanwhile (expired, refused): nothing of ours to release.
    if (!held.drop(account, 'released', entry)) return;
    try {
      await saveRequests([{ account, fence: entry.fence }]);
      if ((await port.release(account, entry.fence)) && opts.budgets && port.saveRequests) opts.budgets.handedOn(account);
    } catch (err) {
      log.warn({ account, err: errText(err) }, 'handover: could not release the lease; it is taken when it expires');
    }
  }

  /** One round; returns in how many ms the next one is due. */
  async function once(): Promise<number> {
    const asked = clock.now();
    try {
      await port.beat();
      await renewAll(asked);
      if (stopped) return everyMs;
      const view = await port.read();
      const holders = new Map(view.leases.filter((l) => l.live && l.holder !== null).map((l) => [l.account, l.holder!]));
      const plan = balanceAccounts({
        me,
        accounts: opts.accounts(),
        instances: view.instances.map((i) => i.id),
        holders,
        maxReleasesPerRound: opts.maxReleasesPerRound,
      });
      // No new handovers while some are under way: the balancer counts an account being handed over as still held.
      if (handovers.size === 0) plan.release.forEach(handOver);
      let won = 0;
      for (const account of plan.acquire) {
        if (stopped || won >= plan.room) break;
        const fence = await port.acquire(account);
        if (fence === null) continue; // another instance was first
        // Before it counts as held, so that its first make_call already counts them.
        if (opts.budgets && port.readRequests) opts.budgets.seed(account, await port.readRequests(account));
        won++;
        held.take(account, fence, asked + leaseMs - margin);
        log.info({ account, fence }, 'account taken: dialing it');
      }
      return nextRoundIn(view);
    } catch (err) {
      // The database did not answer: held accounts are dialed until their local deadline (a
      // claim would fail anyway), then dropped; the next round tries again.
      log.warn({ err: errText(err) }, 'account leases: the database did not answer');
      const now = clock.now();
      for (const [account, entry] of [...held.entries()]) {
        if (now >= entry.deadline) lose(account, 'the database did not answer within the lease');
      }
      return everyMs;
    }
  }

  /** Early when another instance's lease or row runs out before the regular round. */
  function nextRoundIn(view: Awaited<ReturnType<AccountLeasePort['read']>>): number {
    let next = everyMs;
    for (const l of view.leases) {
      if (l.live && l.holder !== me) next = Math.min(next, l.remainingMs + EXPIRY_SLACK_MS);
    }
    for (const i of view.instances) {
      if (i.id !== me) next = Math.min(next, i.remainingMs + EXPIRY_SLACK_MS);
    }
    return Math.max(MIN_ROUND_MS, next);
  }

  function schedule(inMs: number): void {
    if (stopped) return;
    cancel = clock.setTimer(inMs, () => {
      round = once().then(schedule);
    });
  }

  return {
    held,
    start() {
      round = once().then(schedule);
    },
    settled: () => round,
    async stop() {
      stopped = true;
      cancel?.();
      await round;
      for (const account of held.entries().keys()) handOver(account);
      await Promise.all([...handovers]);
      try {
        await port.leave();
      } catch (err) {
        log.warn({ err: errText(err) }, 'account leases: could not leave; the others rebalance when this row expires');
      }
    },
  };
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// Several lease managers in one process, as several instances, each on its own connection to a
// real PostgreSQL, on one injected clock (the PostgreSQL project only: test/suites/files.ts).
// Time is a ManualClock moved in steps of STEP_MS; after each step every database call the
// step set off is awaited (the managers' rounds and the handovers' releases beside them), then
// the rules are checked: never two instances holding one account, a
// dead or frozen instance's accounts taken over within lease_seconds + 5, a joiner given
// accounts within two lease periods, the spread within ⌈accounts / instances⌉ once settled,
// and the claims of an instance that lost an account refused by the database.
//
// The leases are judged by the injected clock (the port's `at`); it starts in 2030 so that the
// fencing trigger, which reads the database's own clock for expiry, judges claims by their
// fence alone here (expiry by the database's clock: postgres-account-leases.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccountLeaseManager, type AccountLeaseManager, type AccountLeasePort } from '../../src/ha/account-lease-manager.js';
import { storeAccountLeasePort } from '../../src/ha/account-lease-port.js';
import { createLogger } from '../../src/log/logger.js';
import { createRateBudget, type RateBudget } from '../../src/service/rate-budget.js';
import { claimAttempts } from '../../src/store/attempts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { FENCED_SQLSTATE, fencedAccount } from '../../src/store/fencing.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { flushMicrotasks, ManualClock } from '../../src/time/clock.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign, insertLeads } from './status-fixture.js';

const LEASE_MS = 10_000;
const START = Date.UTC(2030, 0, 1);
const STEP_MS = 100;
const ALL_ACCOUNTS = Array.from({ length: 8 }, (_, i) => `acct-${i + 1}`);
/** The accounts of the config, as the instances read it at each round (a reload changes it). */
let ACCOUNTS = ALL_ACCOUNTS;

interface Instance {
  id: string;
  store: DatabaseHandle;
  manager: AccountLeaseManager;
  /** dead: every database call fails (the process is gone, its connection refused); frozen: calls wait for the thaw. */
  fault: 'none' | 'dead' | 'frozen';
  /** Resolved by thaw(): what a frozen instance's database calls wait for. */
  thawed: Promise<void>;
  thaw: () => void;
  handovers: string[];
  /** The engine's wait for make_call requests never ends (a request that never answers). */
  hangHandovers: boolean;
  /** Each account's request budget in this instance (created on first use). */
  budgets: Map<string, RateBudget>;
  /** Its database calls under way: a step awaits them, so simulated time never runs ahead of the database. */
  inflight: Set<Promise<unknown>>;
}

function budgetOf(inst: Instance, account: string): RateBudget {
  let b = inst.budgets.get(account);
  if (!b) inst.budgets.set(account, (b = createRateBudget({ clock, requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10, marginMs: 0 })));
  return b;
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let clock: ManualClock;
let instances: Instance[];
/** For each account, the instant it was last held by someone (the longest gap is checked). */
let lastHeldAt: Map<string, number>;
let longestGap: number;
/** Rules broken inside the managers' callbacks, checked after every step. */
let violations: string[];
/**
 * The managers' warnings (a round the database did not answer, a lease not released), with
 * the simulated ms: a timing check that fails says what the rounds met.
 */
let warnings: string[];

beforeEach(async () => {
  database = await createTestDatabase();
  clock = new ManualClock(START);
  ACCOUNTS = ALL_ACCOUNTS;
  instances = [];
  lastHeldAt = new Map();
  longestGap = 0;
  violations = [];
  warnings = [];
  const first = openPostgres(database.url);
  await migrateToLatest(first.db, { clock: { now: () => 0 } });
  await first.close();
});

afterEach(async () => {
  for (const inst of instances) inst.thaw();
  await Promise.all(instances.filter((i) => i.fault === 'none').map((i) => i.manager.stop()));
  await Promise.all(instances.map((i) => i.store.close()));
  await database.drop();
});

/** A port that fails (dead) or waits (frozen) as its instance's fault says. */
function faulty(inst: () => Instance, port: AccountLeasePort): AccountLeasePort {
  const guard = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const i = inst();
      if (i.fault === 'dead') throw new Error('connect ECONNREFUSED');
      if (i.fault === 'frozen') await i.thawed;
      const call = fn(...args);
      i.inflight.add(call);
      try {
        return await call;
      } finally {
        i.inflight.delete(call);
      }
    };
  return {
    beat: guard(port.beat),
    read: guard(port.read),
    acquire: guard(port.acquire),
    renew: guard(port.renew),
    release: guard(port.release),
    leave: guard(port.leave),
    ...(port.saveRequests ? { saveRequests: guard(port.saveRequests) } : {}),
    ...(port.readRequests ? { readRequests: guard(port.readRequests) } : {}),
  };
}

function startInstance(id: string): Instance {
  const store = openPostgres(database.url);
  let thaw = (): void => undefined;
  const thawed = new Promise<void>((resolve) => (thaw = resolve));
  const inst: Instance = { id, store, manager: null as unknown as AccountLeaseManager, fault: 'none', thawed, thaw, handovers: [], hangHandovers: false, budgets: new Map(), inflight: new Set() };
  const port = faulty(() => inst, storeAccountLeasePort(store.db, { instanceId: id, leaseMs: LEASE_MS, at: () => clock.now() }));
  inst.manager = createAccountLeaseManager({
    port,
    instanceId: id,
    leaseMs: LEASE_MS,
    clock,
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(`${id} at ${clock.now() - START}: ${line.trim()}`) } }),
    accounts: () => ACCOUNTS,
    budgets: {
      ages: (account) => budgetOf(inst, account).recentAges(),
      seed: (account, ages) => budgetOf(inst, account).seed(ages),
      handedOn: (account) => budgetOf(inst, account).forgetSettled(),
    },
    handover: async (account) => {
      // The engine would await the account's make_call requests here: nobody else may hold it yet.
      if (holdersOf(account).length > 0) violations.push(`${id} hands ${account} over while ${holdersOf(account).join(', ')} holds it`);
      inst.handovers.push(account);
      if (inst.hangHandovers) await new Promise(() => undefined);
    },
  });
  // At the instant an instance takes an account, no other may hold it (recorded, not thrown:
  // a throw here would end inside the manager's round, not in the test).
  inst.manager.held.onChange((change) => {
    const holders = holdersOf(change.account);
    if (change.kind === 'taken' && (holders.length !== 1 || holders[0] !== id)) violations.push(`${id} took ${change.account} while ${holders.join(', ')} held it`);
  });
  instances.push(inst);
  inst.manager.start();
  return inst;
}

/** The instances that believe they hold `account` now. */
function holdersOf(account: string): string[] {
  return instances.filter((i) => i.manager.held.holds(account)).map((i) => i.id);
}

function counts(): Map<string, number> {
  return new Map(instances.map((i) => [i.id, i.manager.held.list().length]));
}

/**
 * Awaits what the last step set off: each running manager's round, and every database call
 * under way beside it (a handover's release after its grace is not part of a round). Without
 * the latter a slow database answer let the driver move simulated time on by whole rounds
 * before a release landed, and a loaded CI machine failed the timing checks.
 */
async function quiesce(): Promise<void> {
  for (;;) {
    await Promise.all(instances.filter((i) => i.fault === 'none').map((i) => i.manager.settled()));
    const calls = instances.flatMap((i) => [...i.inflight]);
    if (calls.length === 0) return;
    await Promise.allSettled(calls);
    // What the answers set off (a release after its saveRequests) starts on the next turns.
    await flushMicrotasks();
  }
}

/** Moves time by `ms` in steps, awaiting what each step set off, checking the rules after each step. */
async function run(ms: number, until?: () => boolean): Promise<number> {
  const start = clock.now();
  for (let t = 0; t < ms; t += STEP_MS) {
    await clock.advance(STEP_MS);
    await quiesce();
    expect(violations).toEqual([]);
    for (const account of ACCOUNTS) {
      const holders = holdersOf(account);
      expect(holders.length, `${account} held by ${holders.join(', ')}`).toBeLessThanOrEqual(1);
      if (holders.length === 1) lastHeldAt.set(account, clock.now());
      else if (lastHeldAt.has(account)) longestGap = Math.max(longestGap, clock.now() - lastHeldAt.get(account)!);
    }
    if (until?.()) return clock.now() - start;
  }
  return clock.now() - start;
}

/** The managers' warnings, as the message of a timing check. */
const why = (): string => warnings.join('\n') || 'no warnings';

const allHeld = () => ACCOUNTS.every((a) => holdersOf(a).length === 1);

function expectSpread(live: Instance[]): void {
  const bound = Math.ceil(ACCOUNTS.length / live.length) + 1;
  for (const inst of live) expect(inst.manager.held.list().length, inst.id).toBeLessThanOrEqual(bound);
  expect(allHeld()).toBe(true);
}

describe('account lease managers on PostgreSQL', () => {
  it('spread eight accounts over three instances at once and keep them there', async () => {
    const three = ['a', 'b', 'c'].map(startInstance);
    // The first to start takes them all, then hands the others their share.
    expect(await run(LEASE_MS, allHeld), why()).toBeLessThanOrEqual(STEP_MS);
    await run(3 * LEASE_MS);
    expectSpread(three);
    expect([...counts().values()].sort()).toEqual([2, 3, 3]);
    // Settled: nothing moves during five more lease periods.
    const moves = three.flatMap((i) => i.handovers).length;
    await run(5 * LEASE_MS);
    expect(three.flatMap((i) => i.handovers).length).toBe(moves);
    expect(longestGap, why()).toBeLessThanOrEqual(LEASE_MS / 3 + STEP_MS);
  });

  it("take a dead instance's accounts over within lease_seconds + 5 and spread them within the bound", async () => {
    const [a, b, c] = ['a', 'b', 'c'].map(startInstance) as [Instance, Instance, Instance];
    await run(2 * LEASE_MS);
    const orphaned = b.manager.held.list().map((h) => h.account);
    expect(orphaned.length).toBeGreaterThan(0);
    b.fault = 'dead';
    const took = await run(LEASE_MS + 5_000, () => orphaned.every((acc) => holdersOf(acc).some((h) => h === 'a' || h === 'c')));
    expect(took, why()).toBeLessThanOrEqual(LEASE_MS + 5_000);
    // Within the lease (plus one step of this driver), not a third of a lease later.
    expect(took, why()).toBeLessThanOrEqual(LEASE_MS + 2 * STEP_MS);
    expect(b.manager.held.list()).toEqual([]);
    await run(2 * LEASE_MS);
    expectSpread([a, c]);
    expect(longestGap, why()).toBeLessThanOrEqual(LEASE_MS + 5_000);
  });

  it('give a joining instance accounts within two lease periods, by handovers, and settle within the bound', async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    expect([...counts().values()]).toEqual([4, 4]);
    a.handovers.length = 0;
    b.handovers.length = 0;
    lastHeldAt.clear();
    const c = startInstance('c');
    const took = await run(2 * LEASE_MS, () => c.manager.held.list().length > 0);
    expect(took, why()).toBeLessThanOrEqual(2 * LEASE_MS);
    await run(3 * LEASE_MS);
    expectSpread([a, b, c]);
    expect(c.manager.held.list().length).toBeGreaterThanOrEqual(2);
    // Every move was a handover, and no account waited longer than a takeover for its new holder.
    expect(a.handovers.length + b.handovers.length).toBe(c.manager.held.list().length);
    expect(longestGap, why()).toBeLessThanOrEqual(LEASE_MS + 5_000);
  });

  it("hand each account's recent requests to its next holder, by handover and after a death", async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    // Every account spends its burst now, on whichever instance holds it.
    const spend = async (): Promise<void> => {
      for (const account of ACCOUNTS) {
        const holder = instances.find((i) => i.fault === 'none' && i.manager.held.holds(account))!;
        for (let n = 0; n < 20; n++) await budgetOf(holder, account).acquire('call');
      }
    };
    await spend();
    const before = new Map(ACCOUNTS.map((acc) => [acc, instances.find((i) => i.manager.held.holds(acc))!.id]));
    const c = startInstance('c');
    await run(2 * LEASE_MS, () => c.manager.held.list().length >= 2);
    const moved = c.manager.held.list().map((h) => h.account);
    expect(moved.length).toBeGreaterThan(0);
    // A joiner's budget starts from what the previous holder sent (within the minute), not from nothing.
    for (const account of moved) expect(budgetOf(c, account).recentAges().length, `${account} from ${before.get(account)}`).toBe(20);
    // ...and the one that handed it on forgets them (handed back, they are not counted twice).
    for (const account of moved) expect(budgetOf(instances.find((i) => i.id === before.get(account))!, account).recentAges()).toEqual([]);

    // A death: what it sent before its last renewal reaches the taker.
    await run(3 * LEASE_MS);
    for (const inst of instances) for (const b of inst.budgets.values()) b.close();
    for (const inst of instances) inst.budgets.clear();
    await spend();
    await run(LEASE_MS / 3 + 2 * STEP_MS);
    const victim = [a, b].find((i) => i.manager.held.list().length > 0)!;
    const lostAccounts = victim.manager.held.list().map((h) => h.account);
    victim.fault = 'dead';
    await run(LEASE_MS + 5_000, () => lostAccounts.every((acc) => holdersOf(acc).some((h) => h !== victim.id)));
    for (const account of lostAccounts) {
      const taker = instances.find((i) => i !== victim && i.manager.held.holds(account))!;
      expect(budgetOf(taker, account).recentAges().length, `${account} taken by ${taker.id}`).toBe(20);
    }
  });

  it('release an account after the handover grace when a make_call request never answers, so the joiner still gets it in time', async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    a.hangHandovers = true;
    b.hangHandovers = true;
    lastHeldAt.clear();
    const c = startInstance('c');
    const took = await run(2 * LEASE_MS, () => c.manager.held.list().length >= 2);
    expect(took, why()).toBeLessThanOrEqual(2 * LEASE_MS);
    // Half a lease of grace, then the taker's next round: less than a takeover.
    expect(longestGap, why()).toBeLessThanOrEqual(LEASE_MS / 2 + LEASE_MS / 3 + 2 * STEP_MS);
    // Their requests never answer: not stopped cleanly (a stop would wait for the grace on a clock nobody moves).
    a.fault = 'dead';
    b.fault = 'dead';
  });

  it("stop the accounts of a frozen instance at its local deadline, refuse its stale fence in the database when it wakes, and take it back in", async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    const [stale] = b.manager.held.list();
    expect(stale).toBeDefined();
    // A claim prepared under b's fence before the freeze.
    const campaignId = await insertCampaign(b.store.db, campaignConfig('c'));
    const [leadId] = await insertLeads(b.store.db, campaignId, 'pending', 1);
    const lead = await b.store.db.selectFrom('leads').select(['id', 'phone_number']).where('id', '=', leadId!).executeTakeFirstOrThrow();
    const claim = { campaignId, leadId: lead.id, contactPosition: 0, phoneNumber: lead.phone_number, assistantId: 1, owner: 'b', now: 1, accountFence: { account: stale!.account, fence: stale!.fence! } };

    b.fault = 'frozen';
    const took = await run(LEASE_MS + 5_000, () => holdersOf(stale!.account).includes('a'));
    expect(took, why()).toBeLessThanOrEqual(LEASE_MS + 5_000);
    // b's own view: held no more (its local deadline passed), though it could not ask anyone.
    expect(b.manager.held.holds(stale!.account)).toBe(false);
    expect(b.manager.held.list()).toEqual([]);
    // b wakes and its claim under the old fence reaches the database: refused, naming the account.
    const refused = await claimAttempts(b.store.db, [claim]).catch((err: unknown) => err);
    expect((refused as { code?: string }).code).toBe(FENCED_SQLSTATE);
    expect(fencedAccount(refused)).toBe(stale!.account);
    b.fault = 'none';
    b.thaw();
    // Its renewals now fail (the fences moved on); it rejoins and is given its share again.
    await run(3 * LEASE_MS);
    expectSpread([a, b]);
    expect(b.manager.held.list().length).toBeGreaterThanOrEqual(3);
  });

  it('hand over the accounts a reload removed, and spread the others again', async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    const removed = ['acct-1', 'acct-2', 'acct-3'];
    const holdersBefore = removed.map((acc) => holdersOf(acc)[0]);
    ACCOUNTS = ALL_ACCOUNTS.filter((acc) => !removed.includes(acc));
    await run(LEASE_MS / 3 + STEP_MS);
    for (const [i, acc] of removed.entries()) {
      expect(holdersOf(acc)).toEqual([]);
      expect(instances.find((x) => x.id === holdersBefore[i])!.handovers).toContain(acc);
    }
    await run(2 * LEASE_MS);
    expectSpread([a, b]);
    for (const acc of removed) expect(holdersOf(acc)).toEqual([]);
  });

  it('hand every account over at a clean stop, so the others take them at once rather than at expiry', async () => {
    const [a, b] = ['a', 'b'].map(startInstance) as [Instance, Instance];
    await run(2 * LEASE_MS);
    const held = b.manager.held.list().map((h) => h.account);
    b.handovers.length = 0; // the moves of the start
    await b.manager.stop();
    b.fault = 'dead'; // stopped: not awaited any more
    expect(b.handovers.sort()).toEqual([...held].sort());
    const took = await run(LEASE_MS, allHeld);
    // At a's next round (a third of a lease), not after the lease.
    expect(took, why()).toBeLessThanOrEqual(LEASE_MS / 3 + STEP_MS);
    expect(a.manager.held.list().length).toBe(ACCOUNTS.length);
  });
});

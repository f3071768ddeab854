import { describe, expect, it } from 'vitest';
import { balanceAccounts, type BalancePlan } from '../../src/ha/account-balance.js';

// The balancer alone: rounds of several instances played against one lease table, each
// instance planning from the same reading, releases applied first (a handover), then the
// takings in a rotating order (the database lets the first one win).

const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

/** One round of every instance on the same reading; returns the plans. */
function round(accounts: string[], instances: string[], holders: Map<string, string>, turn: number): Map<string, BalancePlan> {
  const plans = new Map(instances.map((me) => [me, balanceAccounts({ me, accounts, instances, holders })]));
  for (const [me, plan] of plans) {
    for (const account of plan.release) if (holders.get(account) === me) holders.delete(account);
  }
  const order = instances.map((_, i) => instances[(i + turn) % instances.length]!);
  for (const me of order) {
    const plan = plans.get(me)!;
    let won = 0;
    for (const account of plan.acquire) {
      if (won >= plan.room) break;
      if (holders.has(account)) continue;
      holders.set(account, me);
      won++;
    }
  }
  return plans;
}

function counts(instances: string[], holders: Map<string, string>): number[] {
  return instances.map((i) => [...holders.values()].filter((h) => h === i).length);
}

/** Rounds until nothing changes; returns how many it took (throws past `max`). */
function settle(accounts: string[], instances: string[], holders: Map<string, string>, max = 100): number {
  for (let r = 1; r <= max; r++) {
    const plans = round(accounts, instances, holders, r);
    if ([...plans.values()].every((p) => p.room === 0 && p.release.length === 0)) return r;
  }
  throw new Error(`not settled after ${max} rounds: ${counts(instances, holders).join(',')}`);
}

function expectSpread(accounts: string[], instances: string[], holders: Map<string, string>): void {
  expect(holders.size).toBe(accounts.length);
  const bound = Math.ceil(accounts.length / instances.length);
  for (const c of counts(instances, holders)) expect(c).toBeLessThanOrEqual(bound);
  for (const c of counts(instances, holders)) expect(c).toBeGreaterThanOrEqual(Math.floor(accounts.length / instances.length));
}

describe('the account balancer', () => {
  it('spreads every account within ⌈accounts / instances⌉ once settled, for many sizes, and then plans nothing', () => {
    for (const a of [0, 1, 2, 3, 4, 7, 8, 9, 20, 200]) {
      for (const n of [1, 2, 3, 4, 5, 7]) {
        const accounts = names(a, 'acct-');
        const instances = names(n, 'inst-');
        const holders = new Map<string, string>();
        settle(accounts, instances, holders);
        expectSpread(accounts, instances, holders);
        // Settled means settled: a hundred more rounds move nothing (no oscillation).
        const before = new Map(holders);
        for (let r = 0; r < 100; r++) round(accounts, instances, holders, r);
        expect(holders).toEqual(before);
      }
    }
  });

  it('takes every unheld account in the first round when the instances have room', () => {
    const accounts = names(8, 'acct-');
    const instances = names(3, 'inst-');
    const holders = new Map<string, string>();
    round(accounts, instances, holders, 0);
    expect(holders.size).toBe(8);
  });

  it("hands a dead instance's accounts to the survivors in one round, within the bound", () => {
    const accounts = names(8, 'acct-');
    const instances = names(3, 'inst-');
    const holders = new Map<string, string>();
    settle(accounts, instances, holders);
    // inst-2 dies: its leases expire and its row is gone.
    for (const [a, h] of holders) if (h === 'inst-2') holders.delete(a);
    const survivors = ['inst-1', 'inst-3'];
    round(accounts, survivors, holders, 0);
    expect(holders.size).toBe(8);
    expect(settle(accounts, survivors, holders)).toBe(1);
    expectSpread(accounts, survivors, holders);
  });

  it('gives a joining instance accounts in its first rounds, one handover per giver per round, never taken back by the giver', () => {
    const accounts = names(8, 'acct-');
    const holders = new Map<string, string>();
    settle(accounts, ['inst-1', 'inst-2'], holders);
    expect(counts(['inst-1', 'inst-2'], holders)).toEqual([4, 4]);
    const all = ['inst-1', 'inst-2', 'inst-3'];
    const given: string[] = [];
    let rounds = 0;
    for (; counts(all, holders)[2]! < 2; rounds++) {
      const plans = round(accounts, all, holders, rounds);
      // Never more than one handover per giver per round, and the joiner gives nothing.
      for (const me of ['inst-1', 'inst-2']) expect(plans.get(me)!.release.length).toBeLessThanOrEqual(1);
      expect(plans.get('inst-3')!.release).toEqual([]);
      // The givers take nothing while the joiner is short: what they release goes to it.
      for (const me of ['inst-1', 'inst-2']) expect(plans.get(me)!.room).toBe(0);
      for (const me of ['inst-1', 'inst-2']) given.push(...plans.get(me)!.release);
      expect(rounds).toBeLessThan(3);
    }
    for (const account of given) expect(holders.get(account)).toBe('inst-3');
    settle(accounts, all, holders);
    expectSpread(accounts, all, holders);
  });

  it('gives a joiner accounts even when everyone already holds ⌈accounts / instances⌉ (4 accounts, 2 → 3 instances)', () => {
    const accounts = names(4, 'acct-');
    const holders = new Map<string, string>();
    settle(accounts, ['inst-1', 'inst-2'], holders);
    const all = ['inst-1', 'inst-2', 'inst-3'];
    settle(accounts, all, holders);
    expect(counts(all, holders)[2]).toBeGreaterThanOrEqual(1);
    expectSpread(accounts, all, holders);
  });

  it('when an instance leaves, gives its share back to the others and sheds what is above the new bound only a few per round', () => {
    const accounts = names(20, 'acct-');
    const holders = new Map<string, string>();
    // Unbalanced start: inst-1 holds 12 (an old reading), the others 4 each.
    accounts.forEach((a, i) => holders.set(a, i < 12 ? 'inst-1' : i < 16 ? 'inst-2' : 'inst-3'));
    const plan = balanceAccounts({ me: 'inst-1', accounts, instances: ['inst-1', 'inst-2', 'inst-3'], holders, maxReleasesPerRound: 2 });
    expect(plan.release.length).toBe(2);
    expect(plan.room).toBe(0);
    settle(accounts, ['inst-1', 'inst-2', 'inst-3'], holders);
    expectSpread(accounts, ['inst-1', 'inst-2', 'inst-3'], holders);
  });

  it('settles a cold start of 200 accounts in a few rounds: the first instance took them all, two more join', () => {
    const accounts = names(200, 'acct-');
    const holders = new Map(accounts.map((a) => [a, 'inst-1']));
    const all = ['inst-1', 'inst-2', 'inst-3'];
    // 133 to give up, 22 a round (a third of the fair share of 66): seven rounds, and one that finds nothing to do.
    expect(settle(accounts, all, holders)).toBeLessThanOrEqual(8 + 1);
    expectSpread(accounts, all, holders);
  });

  it('releases an account no longer configured, and leaves accounts held by an instance whose row expired to their lease', () => {
    const plan = balanceAccounts({ me: 'a', accounts: ['x'], instances: ['a', 'b'], holders: new Map([['gone', 'a'], ['x', 'ghost']]) });
    expect(plan.release).toEqual(['gone']);
    expect(plan.room).toBe(0);
  });

  it('counts this instance as live even when its row is not in the reading', () => {
    expect(balanceAccounts({ me: 'a', accounts: ['x', 'y'], instances: [], holders: new Map() })).toMatchObject({ room: 2, release: [] });
  });
});

// Which accounts this instance should take and which it should give up, from one reading of
// the leases and the live instances (several active instances; docs/several-instances.md).
// Every instance runs the same rules on (nearly) the same reading, so they agree without
// talking; the database's conditional writes settle the rare race.
//
// With A accounts and N live instances, f = ⌊A/N⌋ and q = ⌈A/N⌉:
// - an instance takes unheld accounts while it holds fewer than q, but while some instance
//   holds fewer than f only those instances take (so a joiner is not outrun by the others);
// - an instance holding more than q gives up the extra; while some instance holds fewer than
//   f, the instances holding the most give up one each (a few at most per round), only as
//   many in all as the short ones lack beyond the accounts unheld already.
// Settled, every instance holds f or q: never more than ⌈A/N⌉. An instance never takes and
// gives up in the same round, and the thresholds are the same on both sides (gives up above
// q or above f while someone is short, takes below q only when nobody is short or itself is),
// so an account given up is never taken back by the giver: no oscillation.
//
// Each instance prefers accounts by rendezvous hash (account, instance): instances racing for
// unheld accounts after a death try different ones first, and the ones given up are the
// giver's least preferred, so the same accounts stay put across rounds.
import { stableHash } from './stable-hash.js';

export interface BalanceInput {
  /** This instance. */
  me: string;
  /** The accounts to share (the daemon config's). */
  accounts: readonly string[];
  /** The live instances taking part (this one counted even when missing). */
  instances: readonly string[];
  /** Who holds each account under an unexpired lease (an expired or released one is absent). */
  holders: ReadonlyMap<string, string>;
  /**
   * At most this many accounts given up by one instance per round (default: a third of the
   * fair share, at least one: a cold start where the first instance took everything settles
   * in a few rounds however many accounts there are).
   */
  maxReleasesPerRound?: number;
}

export interface BalancePlan {
  /**
   * Unheld accounts this instance may take, most preferred first: take them in this order
   * until `room` were won (another instance may win some first).
   */
  acquire: string[];
  /** How many accounts to take at most this round. */
  room: number;
  /** Accounts held to hand over, least preferred first. */
  release: string[];
}

/** How much `instance` prefers `account` (a stable hash of both): the same on every instance. */
export function preference(account: string, instance: string): number {
  return stableHash(`${account}\u0000${instance}`);
}

function byPreference(accounts: Iterable<string>, instance: string, order: 'most' | 'least'): string[] {
  const sign = order === 'most' ? -1 : 1;
  return [...accounts].sort((a, b) => sign * (preference(a, instance) - preference(b, instance)) || (a < b ? -1 : a > b ? 1 : 0));
}

export function balanceAccounts(input: BalanceInput): BalancePlan {
  const { me } = input;
  const accounts = new Set(input.accounts);
  const live = [...new Set([...input.instances, me])].sort();
  const counts = new Map(live.map((i) => [i, 0]));
  const mine: string[] = [];
  // Held by me but no longer configured: given up now (nobody dials it; the handover is still awaited).
  const stray: string[] = [];
  for (const [account, holder] of input.holders) {
    if (holder === me && !accounts.has(account)) stray.push(account);
    if (!accounts.has(account)) continue;
    if (holder === me) mine.push(account);
    if (counts.has(holder)) counts.set(holder, counts.get(holder)! + 1);
  }
  const a = accounts.size;
  const n = live.length;
  const ceil = Math.ceil(a / n);
  const floor = Math.floor(a / n);
  const short = live.filter((i) => counts.get(i)! < floor);
  const lacking = short.reduce((sum, i) => sum + floor - counts.get(i)!, 0);
  const held = mine.length;
  const maxReleases = Math.max(1, input.maxReleasesPerRound ?? Math.ceil(floor / 3));
  const unheld = [...accounts].filter((acc) => !input.holders.has(acc));

  let giveUp = 0;
  if (held > ceil) {
    giveUp = Math.min(held - ceil, maxReleases);
  } else if (lacking > unheld.length && held > floor) {
    // Unheld accounts are the short instances' to take first: only what they still lack beyond those is given up.
    // The givers, most loaded first (then by id): each gives one per turn until the short ones are served.
    const givers = live.filter((i) => counts.get(i)! > floor).sort((x, y) => counts.get(y)! - counts.get(x)! || (x < y ? -1 : 1));
    const spare = new Map(givers.map((g) => [g, Math.min(counts.get(g)! - floor, maxReleases)]));
    let left = lacking - unheld.length;
    const share = new Map(givers.map((g) => [g, 0]));
    while (left > 0) {
      let gave = false;
      for (const g of givers) {
        if (left === 0) break;
        if (share.get(g)! >= spare.get(g)!) continue;
        share.set(g, share.get(g)! + 1);
        left--;
        gave = true;
      }
      if (!gave) break;
    }
    giveUp = share.get(me) ?? 0;
  }
  const release = [...stray, ...byPreference(mine, me, 'least').slice(0, giveUp)];

  const mayTake = giveUp === 0 && held < ceil && (short.length === 0 || short.includes(me));
  if (!mayTake || unheld.length === 0) return { acquire: [], room: 0, release };
  return { acquire: byPreference(unheld, me, 'most'), room: Math.min(ceil - held, unheld.length), release };
}

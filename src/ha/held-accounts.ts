import type { Clock } from '../time/clock.js';

// The accounts this instance holds now, with their fence: the one input the engine reads to
// know which accounts it may claim for and dial (several active instances;
// docs/several-instances.md). The lease manager (account-lease-manager.ts) writes it; the
// engine reads it and listens to its changes.
//
// As with the one lease of elector.ts, an account counts as held only until a local deadline
// shorter than its lease, measured from the start of the last renewal that succeeded: a
// process frozen past it finds on waking that it holds nothing, without asking anyone.

/** A change of what this instance holds. */
export interface AccountChange {
  account: string;
  fence: number;
  /**
   * taken: dial it from now on (after settling what the previous holder left);
   * releasing: stop claiming for it, await its make_call requests (a handover has begun);
   * released: handed over; lost: expired or taken by another instance (stop at once).
   */
  kind: 'taken' | 'releasing' | 'released' | 'lost';
}

export interface HeldAccounts {
  /** Whether claims for `account` may be made and its calls sent now. */
  holds(account: string): boolean;
  /** The fence claims for `account` carry, while it is held (being handed over: null). */
  fence(account: string): number | null;
  /** The accounts held now (not being handed over), with their fence (null: one daemon holds every account, unfenced). */
  list(): { account: string; fence: number | null }[];
  /** Calls `fn` at every change; returns how to stop. */
  onChange(fn: (change: AccountChange) => void): () => void;
  /** The database refused a claim for `account` under its fence: stop dialing it now. */
  lost(account: string, reason: string): void;
}

/** One account held, as the manager keeps it. */
export interface HeldEntry {
  fence: number;
  /** Local instant until which it counts as held. */
  deadline: number;
  /** A handover has begun: no new claims, the lease is still renewed until released. */
  releasing: boolean;
}

/** The writable side, for the lease manager. */
export interface HeldAccountsBook extends HeldAccounts {
  entries(): ReadonlyMap<string, HeldEntry>;
  take(account: string, fence: number, deadline: number): void;
  extend(account: string, deadline: number): void;
  beginRelease(account: string): HeldEntry | undefined;
  /** Removes `account` (its entry must still be `entry`); false when it was lost meanwhile. */
  drop(account: string, kind: 'released' | 'lost', entry?: HeldEntry): boolean;
}

export function createHeldAccounts(clock: Clock, onLost: (account: string, reason: string) => void = () => undefined): HeldAccountsBook {
  const held = new Map<string, HeldEntry>();
  const listeners = new Set<(change: AccountChange) => void>();

  function emit(change: AccountChange): void {
    for (const fn of [...listeners]) fn(change);
  }

  function live(account: string): HeldEntry | undefined {
    const entry = held.get(account);
    return entry && !entry.releasing && clock.now() < entry.deadline ? entry : undefined;
  }

  const book: HeldAccountsBook = {
    holds: (account) => live(account) !== undefined,
    fence: (account) => live(account)?.fence ?? null,
    list: () => [...held.keys()].filter((a) => live(a)).map((account) => ({ account, fence: held.get(account)!.fence })),
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    lost(account, reason) {
      if (book.drop(account, 'lost')) onLost(account, reason);
    },
    entries: () => held,
    take(account, fence, deadline) {
      held.set(account, { fence, deadline, releasing: false });
      emit({ account, fence, kind: 'taken' });
    },
    extend(account, deadline) {
      const entry = held.get(account);
      if (entry) entry.deadline = deadline;
    },
    beginRelease(account) {
      const entry = held.get(account);
      if (!entry || entry.releasing) return undefined;
      entry.releasing = true;
      emit({ account, fence: entry.fence, kind: 'releasing' });
      return entry;
    },
    drop(account, kind, entry) {
      const current = held.get(account);
      if (!current || (entry && current !== entry)) return false;
      held.delete(account);
      emit({ account, fence: current.fence, kind });
      return true;
    },
  };
  return book;
}

/**
 * One daemon holding every account (SQLite, or PostgreSQL without several active
 * instances): always held, and no account fence (claims are judged as before).
 */
export function everyAccountHeld(accounts: () => readonly string[]): HeldAccounts {
  return {
    holds: () => true,
    fence: () => null,
    list: () => accounts().map((account) => ({ account, fence: null })),
    onChange: () => () => undefined,
    lost: () => undefined,
  };
}

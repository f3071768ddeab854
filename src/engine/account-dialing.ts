import type { HeldAccounts } from '../ha/held-accounts.js';
import { fencedAccount } from '../store/fencing.js';

// What the dial loop needs of the accounts this instance holds (several active instances;
// docs/several-instances.md), in one place: whether an account may be dialed now, the fence
// its claims carry, what a refused claim means, and its make_call requests in flight, which a
// handover awaits before the lease is released (so a move never double-dials).

export interface AccountDialing {
  /** Whether claims for `account` may be made and its calls sent now. */
  mayDial(account: string): boolean;
  /** The fence a claim for `account` carries (ClaimInput.accountFence); undefined: unfenced (one daemon holds every account). */
  claimFence(account: string): { account: string; fence: number } | undefined;
  /** A claim pass failed with `err`: when the database refused an account's fence, that account is lost (true). */
  refused(err: unknown): boolean;
  /** Follows one make_call request of `account` until it settles; returns it. */
  track<T>(account: string, request: Promise<T>): Promise<T>;
  /** Resolves once every request of `account` in flight now has settled (the lease manager's `handover`). */
  drain(account: string): Promise<void>;
  inflight(account: string): number;
}

export function createAccountDialing(held: HeldAccounts): AccountDialing {
  const inflight = new Map<string, Set<Promise<unknown>>>();
  return {
    mayDial: (account) => held.holds(account),
    claimFence(account) {
      const fence = held.fence(account);
      return fence === null ? undefined : { account, fence };
    },
    refused(err) {
      const account = fencedAccount(err);
      if (account === undefined) return false;
      held.lost(account, 'the database refused a claim under its fence');
      return true;
    },
    track(account, request) {
      let set = inflight.get(account);
      if (!set) inflight.set(account, (set = new Set()));
      const settled = request.then(
        () => undefined,
        () => undefined,
      );
      set.add(settled);
      void settled.then(() => {
        set.delete(settled);
        if (set.size === 0 && inflight.get(account) === set) inflight.delete(account);
      });
      return request;
    },
    async drain(account) {
      await Promise.all([...(inflight.get(account) ?? [])]);
    },
    inflight: (account) => inflight.get(account)?.size ?? 0,
  };
}

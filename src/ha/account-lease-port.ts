import type { Kysely } from 'kysely';
import {
  acquireAccountLease,
  beatLeaseInstance,
  leaveLeaseInstances,
  liveLeaseInstances,
  readAccountLeases,
  readAccountRequests,
  releaseAccountLease,
  renewAccountLeases,
  saveAccountRequests,
} from '../store/account-leases.js';
import type { Database } from '../store/types.js';
import type { AccountLeasePort } from './account-lease-manager.js';

/**
 * The lease manager's port on the store (src/store/account-leases.ts), for one instance on a
 * connection of its own (a long transaction on the engine's must not delay renewals).
 * `at`: judge leases by this clock instead of the database's (tests on injected time only).
 */
export function storeAccountLeasePort(db: Kysely<Database>, opts: { instanceId: string; leaseMs: number; at?: () => number }): AccountLeasePort {
  const { instanceId: holder, leaseMs } = opts;
  const at = (): number | undefined => opts.at?.();
  return {
    beat: () => beatLeaseInstance(db, { instance: holder, leaseMs, at: at() }),
    async read() {
      const now = at();
      const [instances, leases] = await Promise.all([liveLeaseInstances(db, now), readAccountLeases(db, now)]);
      return {
        instances: instances.map((i) => ({ id: i.instance_id, remainingMs: i.remaining_ms })),
        leases: leases.map((l) => ({ account: l.account, holder: l.holder, live: l.live, remainingMs: l.remaining_ms })),
      };
    },
    acquire: (account) => acquireAccountLease(db, { account, holder, leaseMs, at: at() }),
    renew: (leases) => renewAccountLeases(db, { holder, leases, leaseMs, at: at() }),
    release: (account, fence) => releaseAccountLease(db, { account, holder, fence }),
    leave: () => leaveLeaseInstances(db, holder),
    saveRequests: (entries) => saveAccountRequests(db, { holder, entries, at: at() }),
    readRequests: (account) => readAccountRequests(db, account, at()),
  };
}

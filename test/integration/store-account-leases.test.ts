// The account leases on both databases (on SQLite one daemon holds every account, but the
// table and the functions are the same): taking, renewing, handing over, judged by a given
// instant or by the database's own clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountHoldings, acquireAccountLease, readAccountLeases, readAccountRequests, releaseAccountLease, renewAccountLeases, saveAccountRequests } from '../../src/store/account-leases.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrations } from '../../migrations/index.js';
import type { Kysely } from 'kysely';
import { openTestStore } from '../helpers/test-store.js';
import { upsertDaemon } from './status-fixture.js';

let store: DatabaseHandle;

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: { now: () => 0 } });
});

afterEach(async () => {
  await store.close();
});

describe('account leases in the store', () => {
  it('take, renew and hand over under a given instant', async () => {
    const db = store.db;
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 1_000, at: 5_000 })).toBe(1);
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 1_000, at: 5_500 })).toBeNull();
    expect(await renewAccountLeases(db, { holder: 'A', leases: [{ account: 'acme', fence: 1 }], leaseMs: 1_000, at: 5_900 })).toEqual(new Set(['acme']));
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 1_000, at: 6_899 })).toBeNull();
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 1_000, at: 6_900 })).toBe(2);
    expect(await releaseAccountLease(db, { account: 'acme', holder: 'A', fence: 1 })).toBe(false);
    expect(await releaseAccountLease(db, { account: 'acme', holder: 'B', fence: 2 })).toBe(true);
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 1_000, at: 6_901 })).toBe(3);
    expect(await readAccountLeases(db, 7_000)).toEqual([{ account: 'acme', holder: 'A', fence: 3, expires_at: 7_901, taken_at: 6_901, live: true, remaining_ms: 901 }]);
  });

  it("hand the holder's recent requests to the next holder, aged by the database's clock", async () => {
    const db = store.db;
    expect(await readAccountRequests(db, 'acme', 1_000)).toEqual([]);
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 10_000, at: 1_000 })).toBe(1);
    expect(await acquireAccountLease(db, { account: 'globex', holder: 'A', leaseMs: 10_000, at: 1_000 })).toBe(1);
    await saveAccountRequests(db, { holder: 'A', entries: [{ account: 'acme', fence: 1, ages: [0, 250.4, 9_000] }, { account: 'globex', fence: 1, ages: [] }], at: 4_000 });
    // Neither another holder nor an old fence writes over them.
    await saveAccountRequests(db, { holder: 'B', entries: [{ account: 'acme', fence: 1, ages: [1] }], at: 4_500 });
    await saveAccountRequests(db, { holder: 'A', entries: [{ account: 'acme', fence: 0, ages: [2] }], at: 4_500 });
    expect(await releaseAccountLease(db, { account: 'acme', holder: 'A', fence: 1 })).toBe(true);
    // The taker reads them 1.5 s later: each request 1.5 s older.
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 10_000, at: 5_500 })).toBe(2);
    expect(await readAccountRequests(db, 'acme', 5_500)).toEqual([1_500, 1_750, 10_500]);
    expect(await readAccountRequests(db, 'globex', 5_500)).toEqual([]);
    // By the database's own clock: written now, read now.
    await saveAccountRequests(db, { holder: 'B', entries: [{ account: 'acme', fence: 2, ages: [100] }] });
    const [age] = await readAccountRequests(db, 'acme');
    expect(age).toBeGreaterThanOrEqual(100);
    expect(age).toBeLessThan(5_000);
  });

  it("judge expiry by the database's own clock when no instant is given", async () => {
    const db = store.db;
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 60_000 })).toBe(1);
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 60_000 })).toBeNull();
    const [row] = await readAccountLeases(db);
    expect(row).toMatchObject({ holder: 'A', live: true });
    expect(row!.remaining_ms).toBeGreaterThan(50_000);
    expect(row!.remaining_ms).toBeLessThanOrEqual(60_000);
    // Its expiry is in epoch ms (not seconds, not days): within a day of the test's own clock.
    expect(Math.abs(row!.expires_at - 60_000 - Date.now())).toBeLessThan(86_400_000);
  });

  it('say for status who dials each account: instance, pid, hostname and expiry, or nobody between a death and its takeover', async () => {
    const db = store.db;
    await upsertDaemon(db, { instance: 'inst-a', pid: 101, hostname: 'host-a', heartbeatAt: 1 });
    await acquireAccountLease(db, { account: 'acme', holder: 'inst-a', leaseMs: 1_000, at: 5_000 });
    await acquireAccountLease(db, { account: 'globex', holder: 'inst-b', leaseMs: 500, at: 5_000 });
    await acquireAccountLease(db, { account: 'initech', holder: 'inst-a', leaseMs: 1_000, at: 5_000 });
    await releaseAccountLease(db, { account: 'initech', holder: 'inst-a', fence: 1 });
    expect(await accountHoldings(db, 5_400)).toEqual([
      { account: 'acme', instance: 'inst-a', pid: 101, hostname: 'host-a', lease_expires_at: 6_000 },
      // inst-b has no daemons row (it never wrote one, or it was pruned): the lease still says who.
      { account: 'globex', instance: 'inst-b', pid: null, hostname: null, lease_expires_at: 5_500 },
      { account: 'initech', instance: null, pid: null, hostname: null, lease_expires_at: null },
    ]);
    expect((await accountHoldings(db, 5_600)).map((h) => h.instance)).toEqual(['inst-a', null, null]);
  });

  it('0023 goes down to the schema before it and up again', async () => {
    const db = store.db as unknown as Kysely<any>;
    await acquireAccountLease(store.db, { account: 'acme', holder: 'A', leaseMs: 1_000, at: 5_000 });
    await migrations['0023_account_leases']!.down(db);
    const tables = (await db.introspection.getTables()).map((t) => t.name);
    expect(tables).not.toContain('account_leases');
    expect(tables).not.toContain('lease_instances');
    const attempts = (await db.introspection.getTables()).find((t) => t.name === 'attempts')!;
    expect(attempts.columns.map((c) => c.name)).not.toContain('fence_account');
    await migrations['0023_account_leases']!.up(db);
    expect(await readAccountLeases(store.db, 0)).toEqual([]);
  });
});

// The claims of a daemon's accounts share one group commit, committed durably
// (src/engine/accounts.ts, group-commit.ts `durable`): the passes of one turn of the event loop are committed
// together, and a claim refused by its account's fence (PostgreSQL) fails alone, never
// another account's claims of the same batch. Run on SQLite and on PostgreSQL.
import type { Transaction } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireAccountLease, releaseAccountLease } from '../../src/store/account-leases.js';
import { claimAttemptsIn, type ClaimInput } from '../../src/store/attempts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { FENCED_SQLSTATE, fencedAccount } from '../../src/store/fencing.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign, insertLeads } from './status-fixture.js';

let handle: DatabaseHandle;
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => handle.close());

/** A deferral the test fires by hand, so that "one turn" is exactly what the test says. */
function manualTurns(): { defer: (fn: () => void) => void; turn: () => void } {
  const queued: (() => void)[] = [];
  return { defer: (fn) => queued.push(fn), turn: () => queued.splice(0).forEach((fn) => fn()) };
}

async function threeLeads(): Promise<(account: string, fence: number, i: number) => ClaimInput> {
  const db = handle.db;
  const campaignId = await insertCampaign(db, campaignConfig('c'));
  const leadIds = await insertLeads(db, campaignId, 'pending', 3);
  const leads = await db.selectFrom('leads').select(['id', 'phone_number']).where('id', 'in', leadIds).orderBy('id').execute();
  return (account, fence, i) => ({
    campaignId, leadId: leads[i]!.id, contactPosition: 0, phoneNumber: leads[i]!.phone_number, assistantId: 1, owner: 'A', now: 1, accountFence: { account, fence },
  });
}

describe('claims shared by the accounts of one daemon', () => {
  it("commits the passes of several accounts queued in one turn in one transaction, each told its own claims", async () => {
    const input = await threeLeads();
    const acme = (await acquireAccountLease(handle.db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    const globex = (await acquireAccountLease(handle.db, { account: 'globex', holder: 'A', leaseMs: 60_000 }))!;
    const turns = manualTurns();
    const claims = createGroupCommit(handle.db, { defer: turns.defer });
    const seen = new Set<Transaction<Database>>();
    const pass = (inputs: ClaimInput[]) =>
      claims.run((trx) => {
        seen.add(trx);
        return claimAttemptsIn(trx, inputs);
      }, { durable: true });
    const results = [pass([input('acme', acme, 0), input('acme', acme, 1)]), pass([input('globex', globex, 2)])];
    turns.turn();
    const [a, g] = await Promise.all(results);
    expect(seen.size).toBe(1);
    expect(a!.map((r) => r.ok)).toEqual([true, true]);
    expect(g!.map((r) => r.ok && r.attempt.fence_account)).toEqual(['globex']);
    expect(await handle.db.selectFrom('attempts').select('fence_account').orderBy('id').execute()).toEqual([{ fence_account: 'acme' }, { fence_account: 'acme' }, { fence_account: 'globex' }]);
  });

  it.skipIf(testDialect !== 'postgres')("a claim refused by its account's fence fails alone: the other account's claims of the batch are committed", async () => {
    const input = await threeLeads();
    const acme1 = (await acquireAccountLease(handle.db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    const globex = (await acquireAccountLease(handle.db, { account: 'globex', holder: 'A', leaseMs: 60_000 }))!;
    // acme moved to B: A's claims under its old fence are refused by the database.
    await releaseAccountLease(handle.db, { account: 'acme', holder: 'A', fence: acme1 });
    await acquireAccountLease(handle.db, { account: 'acme', holder: 'B', leaseMs: 60_000 });
    const turns = manualTurns();
    const claims = createGroupCommit(handle.db, { defer: turns.defer });
    const before = claims.run((trx) => claimAttemptsIn(trx, [input('globex', globex, 0)]), { durable: true });
    const refused = claims.run((trx) => claimAttemptsIn(trx, [input('acme', acme1, 1)]), { durable: true }).catch((err: unknown) => err);
    const after = claims.run((trx) => claimAttemptsIn(trx, [input('globex', globex, 2)]), { durable: true });
    turns.turn();
    const err = await refused;
    expect((err as { code?: string }).code).toBe(FENCED_SQLSTATE);
    expect(fencedAccount(err)).toBe('acme');
    expect((await before)[0]!.ok).toBe(true);
    expect((await after)[0]!.ok).toBe(true);
    expect(await handle.db.selectFrom('attempts').select('fence_account').orderBy('id').execute()).toEqual([{ fence_account: 'globex' }, { fence_account: 'globex' }]);
  });
});

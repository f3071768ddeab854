// The per-account leases on a real PostgreSQL (the PostgreSQL project only: test/suites/files.ts).
// What the database itself guarantees whatever the instances believe: one holder per account
// however their requests interleave, a new fence at every taking, and no claim written for an
// account under a fence that is not current (migration 0023's trigger, in the claim's own
// transaction).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { claimAttempts, type ClaimInput } from '../../src/store/attempts.js';
import {
  acquireAccountLease,
  beatLeaseInstance,
  leaveLeaseInstances,
  liveLeaseInstances,
  readAccountLeases,
  releaseAccountLease,
  renewAccountLeases,
} from '../../src/store/account-leases.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { FENCED_SQLSTATE, fencedAccount } from '../../src/store/fencing.js';
import { takeLease } from '../../src/store/lease.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign, insertLeads } from './status-fixture.js';

/** Connections, each a pool of one as the daemon's lease connection: as many instances. */
const CONNECTIONS = 6;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let conns: DatabaseHandle[];

beforeEach(async () => {
  database = await createTestDatabase();
  conns = Array.from({ length: CONNECTIONS }, () => openPostgres(database.url));
  await migrateToLatest(conns[0]!.db, { clock: { now: () => 0 } });
});

afterEach(async () => {
  await Promise.all(conns.map((c) => c.close()));
  await database.drop();
});

const T0 = Date.UTC(2030, 0, 1);

async function dueLeads(h: DatabaseHandle, n: number): Promise<ClaimInput[]> {
  const campaignId = await insertCampaign(h.db, campaignConfig('c'));
  const leadIds = await insertLeads(h.db, campaignId, 'pending', n);
  const leads = await h.db.selectFrom('leads').select(['id', 'phone_number']).where('id', 'in', leadIds).orderBy('id').execute();
  return leads.map((l) => ({ campaignId, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'x', now: 1 }));
}

describe('account leases on PostgreSQL', () => {
  it('takes an unheld or expired account, raises the fence at every taking, renews and releases only under the current fence', async () => {
    const [a, b] = [conns[0]!.db, conns[1]!.db];
    expect(await acquireAccountLease(a, { account: 'acme', holder: 'A', leaseMs: 10_000, at: T0 })).toBe(1);
    expect(await acquireAccountLease(b, { account: 'acme', holder: 'B', leaseMs: 10_000, at: T0 + 9_999 })).toBeNull();
    // Held by A even for A: a second taking is not a renewal.
    expect(await acquireAccountLease(a, { account: 'acme', holder: 'A', leaseMs: 10_000, at: T0 + 1 })).toBeNull();
    expect(await renewAccountLeases(a, { holder: 'A', leases: [{ account: 'acme', fence: 1 }], leaseMs: 10_000, at: T0 + 5_000 })).toEqual(new Set(['acme']));
    // B tries the renewed lease at the old expiry: still A's.
    expect(await acquireAccountLease(b, { account: 'acme', holder: 'B', leaseMs: 10_000, at: T0 + 10_000 })).toBeNull();
    // A stops renewing: at the expiry B takes it under fence 2, and A renews nothing any more.
    expect(await acquireAccountLease(b, { account: 'acme', holder: 'B', leaseMs: 10_000, at: T0 + 15_000 })).toBe(2);
    expect(await renewAccountLeases(a, { holder: 'A', leases: [{ account: 'acme', fence: 1 }], leaseMs: 10_000, at: T0 + 15_001 })).toEqual(new Set());
    expect(await releaseAccountLease(a, { account: 'acme', holder: 'A', fence: 1 })).toBe(false);
    // A renewal under a stale fence by the right holder does nothing either.
    expect(await renewAccountLeases(b, { holder: 'B', leases: [{ account: 'acme', fence: 1 }], leaseMs: 10_000, at: T0 + 15_001 })).toEqual(new Set());
    // B hands it over: A takes it at once, under fence 3.
    expect(await releaseAccountLease(b, { account: 'acme', holder: 'B', fence: 2 })).toBe(true);
    expect(await readAccountLeases(a, T0 + 15_002)).toEqual([
      { account: 'acme', holder: null, fence: 2, expires_at: 0, taken_at: T0 + 15_000, live: false, remaining_ms: -(T0 + 15_002) },
    ]);
    expect(await acquireAccountLease(a, { account: 'acme', holder: 'A', leaseMs: 10_000, at: T0 + 15_002 })).toBe(3);
    expect((await readAccountLeases(b, T0 + 16_000))[0]).toMatchObject({ holder: 'A', fence: 3, live: true, remaining_ms: 9_002 });
  });

  it('renews all of an instance\'s leases in one statement, only those still its own under their fence', async () => {
    const db = conns[0]!.db;
    for (const account of ['a1', 'a2', 'a3']) await acquireAccountLease(db, { account, holder: 'A', leaseMs: 1_000, at: T0 });
    await acquireAccountLease(db, { account: 'b1', holder: 'B', leaseMs: 1_000, at: T0 });
    // a3 expired and was taken by B in between.
    expect(await acquireAccountLease(db, { account: 'a3', holder: 'B', leaseMs: 1_000, at: T0 + 1_000 })).toBe(2);
    const renewed = await renewAccountLeases(db, {
      holder: 'A',
      leases: [{ account: 'a1', fence: 1 }, { account: 'a2', fence: 1 }, { account: 'a3', fence: 1 }, { account: 'b1', fence: 1 }],
      leaseMs: 1_000,
      at: T0 + 999,
    });
    expect(renewed).toEqual(new Set(['a1', 'a2']));
  });

  it('lets exactly one of several instances take an account, however their requests race', async () => {
    const accounts = Array.from({ length: 12 }, (_, i) => `acct-${i}`);
    // Round 1: every instance goes for every account at once.
    const winners = new Map<string, string[]>();
    await Promise.all(
      conns.flatMap((c, i) =>
        accounts.map(async (account) => {
          const fence = await acquireAccountLease(c.db, { account, holder: `inst-${i}`, leaseMs: 1_000, at: T0 });
          if (fence !== null) winners.set(account, [...(winners.get(account) ?? []), `inst-${i}`]);
        }),
      ),
    );
    for (const account of accounts) expect(winners.get(account)).toHaveLength(1);
    // Round 2: the leases expire; the holders renew (too late) while the others race to take over.
    const takers = new Map<string, string[]>();
    const late = await Promise.all(
      conns.map(async (c, i) => {
        const mine = accounts.filter((a) => winners.get(a)![0] === `inst-${i}`).map((account) => ({ account, fence: 1 }));
        const [renewed] = await Promise.all([
          renewAccountLeases(c.db, { holder: `inst-${i}`, leases: mine, leaseMs: 1_000, at: T0 + 1_000 }),
          ...accounts.map(async (account) => {
            const fence = await acquireAccountLease(c.db, { account, holder: `inst-${i}`, leaseMs: 1_000, at: T0 + 1_000 });
            if (fence !== null) takers.set(account, [...(takers.get(account) ?? []), `inst-${i}:${fence}`]);
          }),
        ]);
        return renewed.size;
      }),
    );
    expect(late.reduce((x, y) => x + y, 0)).toBe(0);
    for (const account of accounts) expect(takers.get(account)).toEqual([expect.stringMatching(/:2$/)]);
    const rows = await readAccountLeases(conns[0]!.db, T0 + 1_001);
    expect(rows.map((r) => `${r.account}=${r.holder}:${r.fence}`).sort()).toEqual(accounts.map((a) => `${a}=${takers.get(a)![0]}`).sort());
  });

  it('never fails when instances take accounts nobody has taken yet at the same moment', async () => {
    // Every connection goes through the same new accounts in the same order, so two of them
    // often INSERT one account at once. Both pass ON CONFLICT's check before either row is in,
    // and the second then met the first one's (account, fence) in the other unique index
    // (0036): "duplicate key value violates unique constraint account_leases_fence", a lease
    // round lost (4 in 6,000 takings here before the fix, and this test failed in 2 runs of 3;
    // the three-instance spread test failed on it in CI). Now the taking is decided again
    // (src/store/upsert-race.ts): the other instance holds it.
    const accounts = Array.from({ length: 1_000 }, (_, i) => `new-${i}`);
    const failures: string[] = [];
    const winners = new Map<string, number>();
    await Promise.all(
      conns.map(async (c, i) => {
        for (const account of accounts) {
          try {
            if ((await acquireAccountLease(c.db, { account, holder: `inst-${i}`, leaseMs: 60_000, at: T0 })) !== null) winners.set(account, (winners.get(account) ?? 0) + 1);
          } catch (err) {
            failures.push(`${account}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }),
    );
    expect(failures).toEqual([]);
    expect([...winners.values()].every((n) => n === 1) && winners.size === accounts.length).toBe(true);
  });

  it('keeps the instances taking part: a beat renews, an expired row is not live, leaving removes it', async () => {
    const db = conns[0]!.db;
    await beatLeaseInstance(db, { instance: 'A', leaseMs: 1_000, at: T0 });
    await beatLeaseInstance(db, { instance: 'B', leaseMs: 1_000, at: T0 + 500 });
    await beatLeaseInstance(db, { instance: 'A', leaseMs: 1_000, at: T0 + 600 });
    expect(await liveLeaseInstances(db, T0 + 1_200)).toEqual([
      { instance_id: 'A', joined_at: T0, remaining_ms: 400 },
      { instance_id: 'B', joined_at: T0 + 500, remaining_ms: 300 },
    ]);
    expect((await liveLeaseInstances(db, T0 + 1_550)).map((i) => i.instance_id)).toEqual(['A']);
    await leaveLeaseInstances(db, 'A');
    expect(await liveLeaseInstances(db, T0 + 1_550)).toEqual([]);
  });

  it("refuses in the claim's own transaction a claim under an account's stale fence, names the account, and rolls the whole claim back", async () => {
    const [a, b] = [conns[0]!, conns[1]!];
    const inputs = await dueLeads(a, 3);
    // The database's clock judges these leases, as in production.
    const fenceA = (await acquireAccountLease(a.db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    const other = (await acquireAccountLease(a.db, { account: 'globex', holder: 'A', leaseMs: 60_000 }))!;
    const [first] = await claimAttempts(a.db, [{ ...inputs[0]!, accountFence: { account: 'acme', fence: fenceA } }]);
    expect(first).toMatchObject({ ok: true });

    // A hands acme over to B; A, unaware, claims under its old fence, beside a claim for an account it still holds.
    await releaseAccountLease(a.db, { account: 'acme', holder: 'A', fence: fenceA });
    const fenceB = (await acquireAccountLease(b.db, { account: 'acme', holder: 'B', leaseMs: 60_000 }))!;
    expect(fenceB).toBe(fenceA + 1);
    const refused = await claimAttempts(a.db, [
      { ...inputs[1]!, accountFence: { account: 'globex', fence: other } },
      { ...inputs[2]!, accountFence: { account: 'acme', fence: fenceA } },
    ]).then(
      () => null,
      (err: unknown) => err,
    );
    expect((refused as { code?: string }).code).toBe(FENCED_SQLSTATE);
    expect(fencedAccount(refused)).toBe('acme');
    const states = await a.db.selectFrom('leads').select('state').where('id', 'in', [inputs[1]!.leadId, inputs[2]!.leadId]).execute();
    expect(states.map((s) => s.state)).toEqual(['pending', 'pending']);
    expect(await a.db.selectFrom('attempts').select('id').where('lead_id', 'in', [inputs[1]!.leadId, inputs[2]!.leadId]).execute()).toEqual([]);

    // The holder's claim passes, and the attempt records the account and fence it was made under.
    const [claimed] = await claimAttempts(b.db, [{ ...inputs[2]!, accountFence: { account: 'acme', fence: fenceB } }]);
    expect(claimed).toMatchObject({ ok: true });
    const rows = await b.db.selectFrom('attempts').select(['lead_id', 'fence_account', 'fence_token']).orderBy('id').execute();
    expect(rows).toEqual([
      { lead_id: inputs[0]!.leadId, fence_account: 'acme', fence_token: fenceA },
      { lead_id: inputs[2]!.leadId, fence_account: 'acme', fence_token: fenceB },
    ]);
  });

  it("a claim in flight holds back a takeover of its account's lease, never its renewal", async () => {
    const [a, b, c] = [conns[0]!, conns[1]!, conns[2]!];
    const inputs = await dueLeads(a, 1);
    const fence = (await acquireAccountLease(a.db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    // A's claim, its transaction still open (as in a group commit with more work after it).
    let commitClaim!: () => void;
    const claimOpen = new Promise<void>((resolve) => (commitClaim = resolve));
    let claimed!: () => void;
    const claimWritten = new Promise<void>((resolve) => (claimed = resolve));
    const input = inputs[0]!;
    const claim = a.db.transaction().execute(async (trx) => {
      // The attempt row a claim writes, whose fencing trigger checks and locks the lease row.
      await trx
        .insertInto('attempts')
        .values({ campaign_id: input.campaignId, lead_id: input.leadId, contact_position: 0, phone_number: input.phoneNumber, assistant_id: 1, state: 'dialing', counted: 1, call_id: null, call_status: null, answered_by: null, outcome: null, detail: null, outcome_source: null, created_at: 1, sent_at: null, answered_at: null, ended_at: null, settle_deadline: null, owner: 'A', fence_account: 'acme', fence_token: fence })
        .execute();
      claimed();
      await claimOpen;
    });
    await claimWritten;
    // The renewal does not wait for it (it waited until the claim committed, and leases ran
    // out under their holders while their claims' transactions ran).
    await sql`set lock_timeout = 2000`.execute(b.db);
    expect(await renewAccountLeases(b.db, { holder: 'A', leases: [{ account: 'acme', fence }], leaseMs: 60_000 })).toEqual(new Set(['acme']));
    // A takeover does: it raises the fence, and must not slip in before the claim commits.
    await releaseAccountLease(b.db, { account: 'acme', holder: 'A', fence });
    let taken = false;
    const takeover = acquireAccountLease(c.db, { account: 'acme', holder: 'C', leaseMs: 60_000 }).then((f) => {
      taken = true;
      return f;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(taken).toBe(false);
    commitClaim();
    await claim;
    expect(await takeover).toBe(fence + 1);
  });

  it('refuses a claim under an expired account lease even when nobody took it, and one for an account never leased', async () => {
    const inputs = await dueLeads(conns[0]!, 2);
    const db = conns[0]!.db;
    const fence = (await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 100 }))!;
    await sql`select pg_sleep(0.2)`.execute(db);
    await expect(claimAttempts(db, [{ ...inputs[0]!, accountFence: { account: 'acme', fence } }])).rejects.toMatchObject({ code: FENCED_SQLSTATE });
    await expect(claimAttempts(db, [{ ...inputs[1]!, accountFence: { account: 'nobody', fence: 1 } }])).rejects.toMatchObject({ code: FENCED_SQLSTATE });
  });

  it('judges an account claim by its own lease, not by the one lease of a standby pair (and that one as before)', async () => {
    const inputs = await dueLeads(conns[0]!, 2);
    const db = conns[0]!.db;
    // Another instance holds the one lease of ha_lease (a standby pair's leftover): account claims ignore it...
    await takeLease(conns[1]!.db, 'old-active', 60_000);
    const fence = (await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    expect((await claimAttempts(db, [{ ...inputs[0]!, accountFence: { account: 'acme', fence } }]))[0]).toMatchObject({ ok: true });
    // ...while a claim without an account is judged against it, as before.
    await expect(claimAttempts(db, [inputs[1]!], { fenceToken: 99 })).rejects.toMatchObject({ code: FENCED_SQLSTATE });
    expect(fencedAccount(await claimAttempts(db, [inputs[1]!]).catch((e: unknown) => e))).toBeUndefined();
  });
});

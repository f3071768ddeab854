// Taking an account over (several active instances): the taker follows as unknown only what
// the account's previous holders left `dialing` (claims under an older fence of that
// account), never another account's calls nor its own, which belong to live instances.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recoverUnfinishedAttempts } from '../../src/engine/recovery.js';
import { silentLogger } from '../../src/log/logger.js';
import { acquireAccountLease, releaseAccountLease } from '../../src/store/account-leases.js';
import { claimAttempts, type ClaimInput } from '../../src/store/attempts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openTestStore } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign, insertLeads } from './status-fixture.js';

let handle: DatabaseHandle;
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => handle.close());

describe('recovery at the taking of an account', () => {
  it("marks unknown only the account's attempts claimed under an older fence", async () => {
    const db = handle.db;
    const campaignId = await insertCampaign(db, campaignConfig('c'));
    const leadIds = await insertLeads(db, campaignId, 'pending', 4);
    const leads = await db.selectFrom('leads').select(['id', 'phone_number']).where('id', 'in', leadIds).orderBy('id').execute();
    const input = (i: number, account: string, fence: number): ClaimInput => ({
      campaignId, leadId: leads[i]!.id, contactPosition: 0, phoneNumber: leads[i]!.phone_number, assistantId: 1, owner: 'A', now: 1, accountFence: { account, fence },
    });
    // Leases by the database's clock, so that the fencing trigger (PostgreSQL) lets the claims in.
    const acme1 = (await acquireAccountLease(db, { account: 'acme', holder: 'A', leaseMs: 60_000 }))!;
    const globex1 = (await acquireAccountLease(db, { account: 'globex', holder: 'A', leaseMs: 60_000 }))!;
    await claimAttempts(db, [input(0, 'acme', acme1), input(1, 'globex', globex1)]);
    // acme moves to B (A was frozen with its request in flight), and B claims under the new fence.
    await releaseAccountLease(db, { account: 'acme', holder: 'A', fence: acme1 });
    const acme2 = (await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 60_000 }))!;
    await claimAttempts(db, [{ ...input(2, 'acme', acme2), owner: 'B' }]);

    const recovered = await recoverUnfinishedAttempts(db, { now: 10, settleMs: 1_000, owner: 'B', logger: silentLogger(), account: { name: 'acme', fence: acme2 } });
    expect(recovered).toBe(1);
    const rows = await db.selectFrom('attempts').select(['lead_id', 'state', 'owner', 'detail']).orderBy('id').execute();
    expect(rows).toEqual([
      { lead_id: leads[0]!.id, state: 'unknown', owner: 'B', detail: 'left unfinished by the previous holder of account acme' },
      { lead_id: leads[1]!.id, state: 'dialing', owner: 'A', detail: null },
      { lead_id: leads[2]!.id, state: 'dialing', owner: 'B', detail: null },
    ]);
  });

  it("puts back only the account's own leads left calling without a live attempt", async () => {
    const db = handle.db;
    const acme = await insertCampaign(db, campaignConfig('acme-calls'));
    const globex = await insertCampaign(db, campaignConfig('globex-calls'));
    // Each campaign has a lead left `calling` with no attempt (its claim's process died).
    const [acmeLead] = await insertLeads(db, acme, 'calling', 1);
    const [globexLead] = await insertLeads(db, globex, 'calling', 1);
    const fence = (await acquireAccountLease(db, { account: 'acme', holder: 'B', leaseMs: 60_000 }))!;

    await recoverUnfinishedAttempts(db, { now: 10, settleMs: 1_000, owner: 'B', logger: silentLogger(), account: { name: 'acme', fence, campaigns: [acme] } });
    const state = async (id: number): Promise<string> => (await db.selectFrom('leads').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
    expect(await state(acmeLead!)).toBe('retry-scheduled');
    // globex's lead is its own holder's to recover, when it takes globex (or starts).
    expect(await state(globexLead!)).toBe('calling');
    await recoverUnfinishedAttempts(db, { now: 20, settleMs: 1_000, owner: 'B', logger: silentLogger() });
    expect(await state(globexLead!)).toBe('retry-scheduled');
  });
});

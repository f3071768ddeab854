// The lease and its fencing on a real PostgreSQL (the PostgreSQL project only: test/suites/files.ts).
// What the database itself guarantees, whatever an instance believes: one holder at a time,
// a new token at each taking, and no intent written under a token that is not current.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { claimAttempts, type ClaimInput } from '../../src/store/attempts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { readLease, releaseLease, renewLease, takeLease } from '../../src/store/lease.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign, insertLeads, upsertDaemon } from './status-fixture.js';
import { collectStatus } from '../../src/status/collect.js';
import { listenForFreedSlots, SLOT_CHANNEL } from '../../src/store/pg-wakeups.js';
import { FENCED_SQLSTATE } from '../../src/store/fencing.js';
import { silentLogger } from '../../src/log/logger.js';
import { systemClock } from '../../src/time/clock.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let a: DatabaseHandle;
let b: DatabaseHandle;

beforeEach(async () => {
  database = await createTestDatabase();
  a = openPostgres(database.url);
  b = openPostgres(database.url);
  await migrateToLatest(a.db, { clock: { now: () => 0 } });
});

afterEach(async () => {
  await a.close();
  await b.close();
  await database.drop();
});

/** A campaign with `n` due leads, and the claim input for each. */
async function dueLeads(h: DatabaseHandle, n: number): Promise<ClaimInput[]> {
  const campaignId = await insertCampaign(h.db, campaignConfig('c'));
  const leadIds = await insertLeads(h.db, campaignId, 'pending', n);
  const leads = await h.db.selectFrom('leads').select(['id', 'phone_number']).where('id', 'in', leadIds).orderBy('id').execute();
  return leads.map((l) => ({ campaignId, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'x', now: 1 }));
}

describe('the lease on PostgreSQL', () => {
  it('has one holder at a time, a new token at each taking, and lets a standby in only once it ran out or was released', async () => {
    expect(await readLease(a.db)).toBeUndefined();
    const t1 = await takeLease(a.db, 'a', 60_000);
    expect(t1).toBe(1);
    expect(await takeLease(b.db, 'b', 60_000)).toBeNull();
    expect(await renewLease(a.db, 'a', t1!, 60_000)).toBe(true);
    expect(await renewLease(b.db, 'b', t1!, 60_000)).toBe(false);

    await releaseLease(a.db, 'a', t1!);
    const t2 = await takeLease(b.db, 'b', 200);
    expect(t2).toBe(2);
    // a's old token no longer renews anything.
    expect(await renewLease(a.db, 'a', t1!, 60_000)).toBe(false);
    expect(await readLease(a.db)).toMatchObject({ holder: 'b', token: 2, live: true });

    // b stops renewing: once the database's clock passes the expiry, a takes it.
    await sql`select pg_sleep(0.3)`.execute(a.db);
    expect((await readLease(a.db))!.live).toBe(false);
    expect(await renewLease(b.db, 'b', t2!, 60_000)).toBe(false);
    expect(await takeLease(a.db, 'a', 60_000)).toBe(3);
  });

  it('never fails when both instances of a pair take the lease of a new database at one moment', async () => {
    // Both INSERTs of the lease row can pass ON CONFLICT's check before either row is in; the
    // second then met the first one's (id, token) in the other unique index (0036) and failed
    // with unique_violation instead of finding the lease held (src/store/upsert-race.ts).
    // Each round starts from a database without the row, as a pair started together does.
    const failures: string[] = [];
    for (let round = 0; round < 300; round++) {
      await a.db.deleteFrom('ha_lease').execute();
      const taken = await Promise.all(
        [a, b].map((h, i) => takeLease(h.db, `inst-${i}`, 60_000).catch((err: unknown) => (failures.push(err instanceof Error ? err.message : String(err)), undefined))),
      );
      if (taken.filter((t) => t === 1).length !== 1 && failures.length === 0) failures.push(`round ${round}: ${JSON.stringify(taken)}`);
    }
    expect(failures).toEqual([]);
  });

  it('refuses in the database an intent written under a token that is no longer current, and rolls its claim back', async () => {
    const inputs = await dueLeads(a, 2);
    const t1 = (await takeLease(a.db, 'a', 60_000))!;
    const [first] = await claimAttempts(a.db, [inputs[0]!], { fenceToken: t1 });
    expect(first).toMatchObject({ ok: true });

    // b takes over (a's lease released, as after a takeover); a wakes up and tries to claim.
    await releaseLease(a.db, 'a', t1);
    const t2 = (await takeLease(b.db, 'b', 60_000))!;
    const refused = await claimAttempts(a.db, [inputs[1]!], { fenceToken: t1 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect((refused as { code?: string }).code).toBe(FENCED_SQLSTATE);
    // The whole claim rolled back: the lead is still due, no attempt exists for it.
    const lead = await a.db.selectFrom('leads').select('state').where('id', '=', inputs[1]!.leadId).executeTakeFirstOrThrow();
    expect(lead.state).toBe('pending');
    expect(await a.db.selectFrom('attempts').select('id').where('lead_id', '=', inputs[1]!.leadId).execute()).toEqual([]);
    // A claim without any token is refused too once a lease exists.
    await expect(claimAttempts(a.db, [inputs[1]!])).rejects.toMatchObject({ code: FENCED_SQLSTATE });

    // The current holder claims it.
    const [claimed] = await claimAttempts(b.db, [inputs[1]!], { fenceToken: t2 });
    expect(claimed).toMatchObject({ ok: true });
    const rows = await b.db.selectFrom('attempts').select(['lead_id', 'fence_token']).orderBy('id').execute();
    expect(rows).toEqual([
      { lead_id: inputs[0]!.leadId, fence_token: t1 },
      { lead_id: inputs[1]!.leadId, fence_token: t2 },
    ]);
  });

  it('refuses an intent under an expired lease even when nobody took it over', async () => {
    const inputs = await dueLeads(a, 1);
    const t1 = (await takeLease(a.db, 'a', 100))!;
    await sql`select pg_sleep(0.2)`.execute(a.db);
    await expect(claimAttempts(a.db, inputs, { fenceToken: t1 })).rejects.toMatchObject({ code: FENCED_SQLSTATE });
  });

  it('status names every running instance, the lease holder active and the others standing by', async () => {
    const now = Date.now();
    await upsertDaemon(a.db, { instance: 'inst-a', pid: 101, hostname: 'host-a', heartbeatAt: now - 1_000 });
    await upsertDaemon(a.db, { instance: 'inst-b', pid: 202, hostname: 'host-b', heartbeatAt: now - 500 });
    await upsertDaemon(a.db, { instance: 'gone', pid: 303, hostname: 'host-c', heartbeatAt: now - 3_600_000 });
    const statusNow = () => collectStatus(a.db, { now, version: 't', isPidAlive: () => true, hostname: 'elsewhere' });
    // Nobody holds the lease yet: both stand by.
    expect((await statusNow()).daemon).toMatchObject({ active_pid: null, instances: [{ pid: 202, role: 'standby' }, { pid: 101, role: 'standby' }] });
    await takeLease(a.db, 'inst-a', 60_000);
    const report = await statusNow();
    expect(report.daemon).toMatchObject({ running: true, pid: 101, hostname: 'host-a', active_pid: 101 });
    expect(report.daemon.instances).toEqual([
      { pid: 202, hostname: 'host-b', role: 'standby', heartbeat_at: new Date(now - 500).toISOString() },
      { pid: 101, hostname: 'host-a', role: 'active', heartbeat_at: new Date(now - 1_000).toISOString() },
    ]);
  });

  it("wakes the active instance's dialer when another connection frees a slot (listenForFreedSlots)", async () => {
    const inputs = await dueLeads(a, 1);
    const [claim] = await claimAttempts(a.db, inputs);
    let wakes = 0;
    let resolveWake: () => void = () => undefined;
    const listener = listenForFreedSlots({
      url: database.url,
      clock: systemClock,
      logger: silentLogger(),
      onWake: () => {
        wakes++;
        resolveWake();
      },
    });
    try {
      // The first wake comes once it listens (whatever was freed before is looked at).
      await new Promise<void>((resolve) => (resolveWake = resolve));
      const woken = new Promise<void>((resolve) => (resolveWake = resolve));
      await b.db.updateTable('attempts').set({ state: 'ended', outcome: 'busy' }).where('id', '=', claim!.ok ? claim!.attempt.id : -1).execute();
      await woken;
      expect(wakes).toBe(2);
    } finally {
      await listener.close();
    }
  });

  it('announces a freed slot on campaignd_slot when an attempt leaves the live states, once per transaction', async () => {
    const inputs = await dueLeads(a, 2);
    const claims = await claimAttempts(a.db, inputs);
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.channel));
    await listener.query(`LISTEN ${SLOT_CHANNEL}`);
    try {
      const ids = claims.map((c) => (c.ok ? c.attempt.id : -1));
      await a.db.transaction().execute(async (trx) => {
        for (const id of ids) await trx.updateTable('attempts').set({ state: 'ended', outcome: 'busy' }).where('id', '=', id).execute();
      });
      // A round trip on the listener's own connection delivers what arrived before it.
      await listener.query('select 1');
      await new Promise((resolve) => setImmediate(resolve));
      expect(heard).toEqual([SLOT_CHANNEL]);
    } finally {
      await listener.end();
    }
  });
});

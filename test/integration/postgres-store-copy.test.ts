// `campaignd store copy` (issue 12, "how to move an existing SQLite store to PostgreSQL"),
// run as the bin runs it, from a SQLite file with campaigns, leads in every state, attempts
// and daemon history into a fresh PostgreSQL database, and back into a new SQLite file.
// What `status` reads must be the same on all three.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectStatus } from '../../src/status/collect.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openStore } from '../../src/store/open-store.js';
import { runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { campaignConfig, createStore, insertAttempt, insertCampaign, insertLeads, makeTempConfig, upsertDaemon } from './status-fixture.js';

const NOW = Date.UTC(2026, 10, 25, 12);
let tmp: ReturnType<typeof makeTempConfig>;
let database: Awaited<ReturnType<typeof createTestDatabase>>;

beforeEach(async () => {
  tmp = makeTempConfig();
  database = await createTestDatabase();
});

afterEach(async () => {
  await stopAllProcesses();
  await database.drop();
  tmp.cleanup();
});

async function statusOf(target: string) {
  const h = await openStore(target);
  try {
    return await collectStatus(h.db, { now: NOW, version: 'test', isPidAlive: () => false });
  } finally {
    await h.close();
  }
}

async function seed(h: DatabaseHandle): Promise<void> {
  const a = await insertCampaign(h.db, campaignConfig('spring'));
  const b = await insertCampaign(h.db, campaignConfig('autumn'), { state: 'paused' });
  const pending = await insertLeads(h.db, a, 'pending', 30);
  await insertLeads(h.db, a, 'completed', 12, NOW - 60_000);
  await insertLeads(h.db, a, 'reached-max-retries', 4, NOW - 60_000);
  await insertLeads(h.db, b, 'retry-scheduled', 7);
  await insertLeads(h.db, b, 'invalid', 2);
  for (const id of pending.slice(0, 5)) await insertAttempt(h.db, { campaignId: a, leadId: id, state: 'ended', createdAt: NOW - 120_000 });
  // A campaign with assistant variants: its figures are kept by triggers (0031) and must arrive as they are.
  const c = await insertCampaign(h.db, campaignConfig('ab', { variants: [{ name: 'x', assistantId: 12, weight: 1 }, { name: 'y', assistantId: 14, weight: 1 }] }));
  const called = await insertLeads(h.db, c, 'completed', 6, NOW - 60_000);
  for (const [i, id] of called.entries()) {
    await h.db.updateTable('leads').set({ variant: i % 2 === 0 ? 'x' : 'y' }).where('id', '=', id).execute();
    await insertAttempt(h.db, { campaignId: c, leadId: id, state: 'ended', createdAt: NOW - 120_000 });
  }
  const attempts = await h.db.selectFrom('attempts').select(['id', 'lead_id']).where('campaign_id', '=', c).execute();
  for (const [i, t] of attempts.entries()) {
    await h.db.updateTable('attempts').set({ outcome: i < 4 ? 'success' : 'busy' }).where('id', '=', t.id).execute();
    await h.db.insertInto('call_results').values({ attempt_id: t.id, campaign_id: c, lead_id: t.lead_id, cost: 0.5 + i, source: 'poll', received_at: NOW, updated_at: NOW }).execute();
  }
  await upsertDaemon(h.db, { instance: 'old', pid: 4242, hostname: 'host-a', heartbeatAt: NOW - 86_400_000, stoppedAt: NOW - 86_400_000 });
}

describe('campaignd store copy', () => {
  it('moves a SQLite store into PostgreSQL and back, with the same status figures and ids that keep counting', async () => {
    const source = await createStore(tmp.dbPath);
    await seed(source);
    await source.close();
    const before = await statusOf(tmp.dbPath);

    const toPg = await runCampaignd(['store', 'copy', '--from', tmp.dbPath, '--to', database.url, '--json']);
    expect(toPg.stderr).toBe('');
    expect(toPg.code).toBe(0);
    const report = JSON.parse(toPg.stdout) as { to: string; tables: Record<string, number> };
    expect(report.tables).toMatchObject({ campaigns: 3, leads: 61, attempts: 11, daemons: 1, variant_counts: 3, campaign_spend: 2 });
    expect(before.campaigns.find((c) => c.name === 'ab')!.variants!.map((v) => [v.name, v.called_leads, v.reached, v.cost])).toEqual([['x', 3, 2, 7.5], ['y', 3, 2, 10.5]]);
    // The URL is shown without its password.
    expect(toPg.stdout).not.toContain(new URL(database.url).password);
    expect(await statusOf(database.url)).toEqual(before);

    // A lead added after the copy gets a fresh id (the identity moved past the copied ones),
    // and the counters PostgreSQL keeps by trigger are switched on again.
    const pg = await openStore(database.url);
    try {
      const campaign = await pg.db.selectFrom('campaigns').select('id').where('name', '=', 'spring').executeTakeFirstOrThrow();
      const [id] = await insertLeads(pg.db, campaign.id, 'pending', 1);
      expect(id).toBeGreaterThan(61);
    } finally {
      await pg.close();
    }
    const after = await statusOf(database.url);
    expect(after.campaigns.find((c) => c.name === 'spring')!.leads.pending).toBe(before.campaigns.find((c) => c.name === 'spring')!.leads.pending + 1);

    // Copying again into a store that holds data is refused, and changes nothing.
    const again = await runCampaignd(['store', 'copy', '--from', tmp.dbPath, '--to', database.url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds rows in "campaigns": copy into an empty database/);
    expect(await statusOf(database.url)).toEqual(after);

    // And back into a new SQLite file, whose triggers rebuild the counters.
    const back = `${tmp.dir}/back.db`;
    const toFile = await runCampaignd(['store', 'copy', '--from', database.url, '--to', back]);
    expect(toFile.stderr).toBe('');
    expect(toFile.code).toBe(0);
    expect(await statusOf(back)).toEqual(after);
  });

  it('refuses a source that a running daemon writes, and a source file that does not exist', async () => {
    const source = await createStore(tmp.dbPath);
    await seed(source);
    await upsertDaemon(source.db, { instance: 'live', pid: 1, hostname: 'elsewhere', heartbeatAt: Date.now() });
    await source.close();
    const busy = await runCampaignd(['store', 'copy', '--from', tmp.dbPath, '--to', database.url]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/a daemon \(pid 1 on elsewhere\) is running/);
    const h = await openStore(database.url);
    try {
      await migrateToLatest(h.db, { clock: { now: () => 0 } });
      expect(await h.db.selectFrom('campaigns').select('id').execute()).toEqual([]);
    } finally {
      await h.close();
    }

    const missing = await runCampaignd(['store', 'copy', '--from', `${tmp.dir}/nope.db`, '--to', database.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.db does not exist/);
  });
});

// `status` on PostgreSQL reads each campaign's recent activity (attempts today in its own
// zone, leads finished in the last hour, the paced span) in one query for all campaigns,
// where SQLite asks per campaign. The same rows in both databases must give the same report.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { collectStatus } from '../../src/status/collect.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Database } from '../../src/store/types.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { campaignConfig, createStore, insertAttempt, insertCampaign, insertLeads } from './status-fixture.js';

const HOUR = 3_600_000;
// 23:30 UTC: already "tomorrow" in Berlin and Tokyo, still "today" in New York.
const NOW = Date.UTC(2026, 10, 25, 23, 30);

let dir = '';
let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await drop?.();
  drop = null;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Campaigns in several zones, with attempts around each one's midnight and leads finished in the last hour. */
async function seed(db: Kysely<Database>): Promise<void> {
  for (const [name, zone, pace] of [
    ['berlin', 'Europe/Berlin', 6],
    ['new-york', 'America/New_York', 3],
    ['tokyo', 'Asia/Tokyo', 0],
    ['utc', null, 9],
  ] as const) {
    const id = await insertCampaign(db, campaignConfig(name, zone ? { timezone: zone } : {}), { timezone: zone });
    await insertLeads(db, id, 'pending', 5);
    const finished = await insertLeads(db, id, 'completed', pace, NOW - HOUR / 2);
    // An attempt per finished lead, spread over the last 50 minutes: the pace and its span.
    for (const [i, leadId] of finished.entries()) await insertAttempt(db, { campaignId: id, leadId, state: 'ended', createdAt: NOW - 50 * 60_000 + i * 5 * 60_000 });
    // Attempts at hours before now: some before the zone's midnight, some after.
    const old = await insertLeads(db, id, 'reached-max-retries', 6, NOW - 30 * HOUR);
    for (const [i, leadId] of old.entries()) await insertAttempt(db, { campaignId: id, leadId, state: 'ended', createdAt: NOW - (i * 5 + 2) * HOUR });
  }
}

describe('status on PostgreSQL', () => {
  it('reports every campaign exactly as SQLite does from the same rows', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-status-pg-'));
    const sqlite = await createStore(path.join(dir, 'campaignd.db'));
    const database = await createTestDatabase();
    const pg: DatabaseHandle = openPostgres(database.url);
    drop = async () => {
      await sqlite.close();
      await pg.close();
      await database.drop();
    };
    await migrateToLatest(pg.db, { clock: { now: () => 0 } });
    await seed(sqlite.db);
    await seed(pg.db);
    const opts = { now: NOW, version: 't', isPidAlive: () => false };
    const fromSqlite = await collectStatus(sqlite.db, opts);
    const fromPg = await collectStatus(pg.db, opts);
    expect(fromPg).toEqual(fromSqlite);
    // The figures are not all zero: the comparison can fail.
    const berlin = fromPg.campaigns.find((c) => c.name === 'berlin')!;
    expect(berlin.completions_last_hour).toBe(6);
    expect(berlin.attempts.today).toBeGreaterThan(0);
    expect(berlin.attempts.today).toBeLessThan(fromPg.campaigns.find((c) => c.name === 'new-york')!.attempts.today);
    // One campaign asked alone takes the per-campaign path: the same figures.
    expect((await collectStatus(pg.db, { ...opts, campaign: 'berlin' })).campaigns).toEqual([berlin]);
  });
});

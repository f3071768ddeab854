// A lead posted through the API on any instance wakes the active one: the request's
// transaction notifies the channel the active instance listens on (src/store/pg-wakeups.ts).
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importLeadItems } from '../../src/leads/import-items.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { SLOT_CHANNEL } from '../../src/store/pg-wakeups.js';
import { openPostgres } from '../../src/store/postgres.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { createTestDatabase } from '../helpers/test-store.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let store: DatabaseHandle;
let listener: pg.Client;
let heard: string[];
let campaignId: number;

beforeEach(async () => {
  database = await createTestDatabase();
  store = openPostgres(database.url);
  await migrateToLatest(store.db, { clock: { now: () => 0 } });
  campaignId = (await upsertCampaign(store.db, testCampaignConfig('api'), { timezone: 'UTC' }, 1)).id;
  listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  heard = [];
  listener.on('notification', (n) => heard.push(n.channel));
  await listener.query(`LISTEN ${SLOT_CHANNEL}`);
});
afterEach(async () => {
  await listener.end();
  await store.close();
  await database.drop();
});

/** What the listener heard up to now: a round trip on its own connection delivers what arrived before it. */
async function heardNow(): Promise<string[]> {
  await listener.query('select 1');
  await new Promise((resolve) => setImmediate(resolve));
  return heard.splice(0);
}

describe('a posted lead wakes the active instance (postgres)', () => {
  it('notifies once per request that added or changed a callable lead, at commit, and not otherwise', async () => {
    const items = [{ phone_number: '+15555550100' }, { phone_number: '+15555550101' }];
    await importLeadItems(store.db, { id: campaignId, allowDuplicates: false }, items, { now: 10 });
    expect(await heardNow()).toEqual([SLOT_CHANNEL]);
    // Nothing new: nothing to wake for.
    await importLeadItems(store.db, { id: campaignId, allowDuplicates: false }, items, { now: 20 });
    await importLeadItems(store.db, { id: campaignId, allowDuplicates: false }, [{ phone_number: 'nope' }], { now: 30 });
    expect(await heardNow()).toEqual([]);
    // A request that failed notifies nobody (NOTIFY is delivered at commit only).
    const failing = importLeadItems(store.db, { id: campaignId, allowDuplicates: false }, [{ phone_number: '+15555550102' }], {
      now: 40,
      after: async () => {
        throw new Error('refused');
      },
    });
    await expect(failing).rejects.toThrow('refused');
    expect(await heardNow()).toEqual([]);
  });
});

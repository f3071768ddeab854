// PostgreSQL's status counters (migration 0037): each connection counts into a row of its own,
// so two transactions that add leads to the same campaign on two connections no longer queue
// behind each other until the first commits (the API's POSTs did, ~1 s under 100 a second),
// and the count status reads is still exact. Real server, real connections.
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { campaignCounts } from '../../src/store/counts.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

const SLOTS = 8;
let handle: DatabaseHandle;
let database: { url: string; drop(): Promise<void> };
let clients: pg.Client[] = [];
let campaignId: number;

beforeEach(async () => {
  database = await createTestDatabase();
  handle = openPostgres(database.url);
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  campaignId = (await upsertCampaign(handle.db, testCampaignConfig('slots'), { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  await Promise.all(clients.map((c) => c.end()));
  clients = [];
  await handle.close();
  await database.drop();
});

/** Connections until two count into different slots (their pids differ modulo 8). */
async function twoSlots(): Promise<[pg.Client, pg.Client]> {
  const bySlot = new Map<number, pg.Client>();
  while (clients.length < 2 * SLOTS) {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    clients.push(client);
    // A writer that would wait for a lock gives up at once rather than after the default minutes.
    await client.query(`SET lock_timeout = '300ms'`);
    const pid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    bySlot.set(pid % SLOTS, client);
    if (bySlot.size === 2) return [...bySlot.values()] as [pg.Client, pg.Client];
  }
  throw new Error(`${clients.length} connections all had backend pids in one slot`);
}

let phone = 0;
function addLead(client: pg.Client, state = 'pending'): Promise<unknown> {
  const number = `+4915100${String(++phone).padStart(6, '0')}`;
  return client.query(`INSERT INTO leads (campaign_id, dedupe_key, phone_number, state, created_at, updated_at) VALUES ($1, $2, $2, $3, 0, 0)`, [campaignId, number, state]);
}

it('lets two connections add leads to one campaign while the first has not committed, and counts both', async () => {
  const [first, second] = await twoSlots();
  await first.query('BEGIN');
  await addLead(first);
  // Before 0037 this waited for the first transaction's counter row and failed (55P03) after 300 ms.
  await addLead(second);
  await first.query('COMMIT');
  expect((await campaignCounts(handle.db)).get(campaignId)?.leads.pending).toBe(2);
});

it('keeps a count exact when one connection adds a lead and another moves it out of its state', async () => {
  const [first, second] = await twoSlots();
  await addLead(first);
  await addLead(first);
  // The second connection's slot goes below zero for 'pending'; the sum does not.
  await second.query(`UPDATE leads SET state = 'calling' WHERE campaign_id = $1 AND phone_number = (SELECT min(phone_number) FROM leads WHERE campaign_id = $1)`, [campaignId]);
  await second.query(`DELETE FROM leads WHERE campaign_id = $1 AND state = 'pending'`, [campaignId]);
  const counts = (await campaignCounts(handle.db)).get(campaignId)?.leads;
  expect(counts?.pending ?? 0).toBe(0);
  expect(counts?.calling).toBe(1);
  const rows = await handle.db.selectFrom('lead_counts').select(['state', 'slot', 'n']).where('campaign_id', '=', campaignId).execute();
  expect(rows.some((r) => Number(r.n) < 0)).toBe(true);
  expect(new Set(rows.map((r) => r.slot)).size).toBe(2);
});

// An import whose batches are written side by side (`leads import` on PostgreSQL writes two
// at once, on two connections): the leads keep the file's order, every row is counted
// once, the status counters agree with the rows, and a failed batch fails the import
// with nothing left running. On SQLite the same calls queue on its one connection.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { importLeads } from '../../src/leads/import.js';
import { readLeadCsv } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { addSuppressions } from '../../src/store/suppressions.js';
import { openTestStore } from '../helpers/test-store.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

let handle: DatabaseHandle;
let dir: string;
let campaignId: number;
const ROWS = 3000;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-import-parallel-'));
  handle = await openTestStore({ maxConnections: 2 });
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  const cfg = testCampaignConfig('parallel', { maxCallsInParallel: 2 });
  campaignId = (await upsertCampaign(handle.db, cfg, { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Row i: every 50th invalid, every 7th with a secondary number, every 100th (from 3) on the do-not-call list. */
function writeFile(): string {
  const lines = ['phone_number,n,secondary_phone_number_1'];
  for (let i = 0; i < ROWS; i++) {
    const phone = i % 50 === 49 ? `bad-${i}` : `+1555${String(1_000_000 + i).slice(-7)}`;
    lines.push(`${phone},${i},${i % 7 === 0 ? `+4930${10_000_000 + i}` : ''}`);
  }
  const file = path.join(dir, 'leads.csv');
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const suppressedNumbers = Array.from({ length: ROWS / 100 }, (_, k) => `+1555${String(1_000_000 + k * 100 + 3).slice(-7)}`);

// On PostgreSQL a batch of more than 64 new leads goes in by COPY, a smaller one by INSERT (lead-batch.ts): both keep their turn.
it.each([97, 50])('keeps the file order in the ids, counts each row once, and leaves the counters right (batches of %i rows)', async (batchSize) => {
  const file = writeFile();
  await addSuppressions(handle.db, suppressedNumbers, 'test', 1);
  const run = (now: number) => importLeads(handle.db, { id: campaignId, allowDuplicates: false }, readLeadCsv(file), { now, sourceFile: file, batchSize, parallelWrites: 2 });

  const first = await run(1000);
  const invalid = ROWS / 50;
  expect(first).toMatchObject({ read: ROWS, accepted: ROWS - invalid - suppressedNumbers.length, suppressed: suppressedNumbers.length, invalid, duplicates: 0, updated: 0, unchanged: 0 });

  const leads = await handle.db.selectFrom('leads').select(['id', 'source_line', 'state', 'phone_number']).where('campaign_id', '=', campaignId).orderBy('id').execute();
  expect(leads).toHaveLength(ROWS);
  // Line 2 is row 0: by id, the leads are the file's lines in order.
  expect(leads.map((l) => l.source_line)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 2));

  // On PostgreSQL each connection counts into a slot of its own (migration 0037): a state's count is their sum.
  const counters = await handle.db
    .selectFrom('lead_counts')
    .select(['state', (eb) => eb.fn.sum<number>('n').as('n')])
    .where('campaign_id', '=', campaignId)
    .groupBy('state')
    .orderBy('state')
    .execute();
  const actual = new Map<string, number>();
  for (const l of leads) actual.set(l.state, (actual.get(l.state) ?? 0) + 1);
  expect(counters.filter((c) => Number(c.n) !== 0).map((c) => [c.state, Number(c.n)])).toEqual([...actual].sort(([a], [b]) => a.localeCompare(b)));

  const contacts = await handle.db.selectFrom('lead_contacts').innerJoin('leads', 'leads.id', 'lead_contacts.lead_id').select(['leads.source_line', 'lead_contacts.position', 'lead_contacts.phone_number']).orderBy('leads.id').execute();
  const withSecondary = Array.from({ length: ROWS }, (_, i) => i).filter((i) => i % 7 === 0 && i % 50 !== 49);
  expect(contacts).toEqual(withSecondary.map((i) => ({ source_line: i + 2, position: 1, phone_number: `+4930${10_000_000 + i}` })));

  // The same file again, side by side too: every row found, nothing added or counted twice.
  expect(await run(2000)).toMatchObject({ read: ROWS, accepted: 0, suppressed: 0, updated: 0, unchanged: ROWS - invalid, invalid });
  expect(Number((await handle.db.selectFrom('leads').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(ROWS);
});

it('fails the whole import when a batch fails, with no write left running', async () => {
  const file = writeFile();
  // No such campaign: every batch breaks the leads' foreign key.
  const failing = importLeads(handle.db, { id: campaignId + 1000, allowDuplicates: false }, readLeadCsv(file), { now: 1, sourceFile: file, batchSize: 97, parallelWrites: 2 });
  await expect(failing).rejects.toThrow(/foreign key/i);
  // The store is usable at once: no batch holds a connection or a transaction open.
  await handle.db.transaction().execute(async (trx) => {
    await trx.updateTable('campaigns').set({ updated_at: 5 }).where('id', '=', campaignId).execute();
  });
  expect(Number((await handle.db.selectFrom('leads').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(0);
});

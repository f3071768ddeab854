// A PostgreSQL import batch that loses a lock conflict on the status counters (another
// writer holds them past lock_timeout, or a deadlock) is rolled back
// whole by the server and written again: the import succeeds and counts each row once.
// Past its tries, the import fails with the server's error and writes nothing more.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { importLeads } from '../../src/leads/import.js';
import { readLeadCsv } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

let handle: DatabaseHandle;
let database: { url: string; drop(): Promise<void> };
let locker: pg.Client;
/** Reads pg_stat_activity outside any transaction: within one, the server keeps showing its first snapshot. */
let watcher: pg.Client;
let dir: string;
let campaignId: number;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-import-retry-'));
  database = await createTestDatabase();
  handle = openPostgres(database.url, { maxConnections: 2, lockTimeoutMs: 300 });
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  const cfg = testCampaignConfig('retry', { maxCallsInParallel: 2 });
  campaignId = (await upsertCampaign(handle.db, cfg, { timezone: 'UTC' }, 1)).id;
  // One lead first: the campaign has a lead before the import that must wait.
  await importFile('first.csv', ['+15550000001']);
  locker = new pg.Client({ connectionString: database.url, application_name: 'locker' });
  await locker.connect();
  watcher = new pg.Client({ connectionString: database.url, application_name: 'watcher' });
  await watcher.connect();
});
afterEach(async () => {
  await locker.end();
  await watcher.end();
  await handle.close();
  await database.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function importFile(name: string, numbers: string[]): ReturnType<typeof importLeads> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `phone_number\n${numbers.join('\n')}\n`);
  return importLeads(handle.db, { id: campaignId, allowDuplicates: false }, readLeadCsv(file), { now: 5, sourceFile: file, parallelWrites: 2 });
}

const numbers = Array.from({ length: 40 }, (_, i) => `+1555${String(2_000_000 + i)}`);

/**
 * Holds the status counters against every writer. Each connection counts into a row of its
 * own (migration 0037), so locking the campaign's rows would not stop a new connection:
 * the table is locked instead, in a mode that lets readers through and no writer.
 */
async function lockCounters(): Promise<void> {
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE lead_counts IN SHARE ROW EXCLUSIVE MODE');
}

/** The transaction start of the import's connection waiting for a lock, once one is (polled: the wait is the server's). */
async function waitingImport(importEnded: () => boolean, notStartedAt?: string): Promise<string> {
  for (;;) {
    if (importEnded()) throw new Error('the import ended before its connection was seen waiting for the lock');
    const { rows } = await watcher.query<{ started: string }>(
      `SELECT xact_start::text AS started FROM pg_stat_activity WHERE application_name = 'campaignd' AND wait_event_type = 'Lock'`,
    );
    const found = rows.find((r) => r.started !== notStartedAt);
    if (found) return found.started;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('writes a batch again after its lock wait timed out, and counts its rows once', async () => {
  await lockCounters();
  // Settled as a value, so that a failure is the test's result, not an unhandled rejection.
  let ended = false;
  const running = importFile('second.csv', numbers).then(
    (summary) => summary,
    (err: unknown) => err,
  );
  void running.finally(() => (ended = true));
  // The first try waits on the held row, times out and is rolled back; the second waits too.
  const firstTry = await waitingImport(() => ended);
  await waitingImport(() => ended, firstTry);
  await locker.query('COMMIT');

  expect(await running).toMatchObject({ read: numbers.length, accepted: numbers.length, invalid: 0, suppressed: 0 });
  const leads = await handle.db.selectFrom('leads').select('phone_number').where('campaign_id', '=', campaignId).execute();
  expect(leads).toHaveLength(1 + numbers.length);
  const counter = await handle.db
    .selectFrom('lead_counts')
    .select((eb) => eb.fn.sum<number>('n').as('n'))
    .where('campaign_id', '=', campaignId)
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  expect(Number(counter.n)).toBe(1 + numbers.length);
});

it('fails with the server\'s lock error when every try times out, and adds nothing', async () => {
  await lockCounters();
  await expect(importFile('second.csv', numbers)).rejects.toMatchObject({ code: '55P03' });
  await locker.query('ROLLBACK');
  const leads = await handle.db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).execute();
  expect(leads).toHaveLength(1);
});

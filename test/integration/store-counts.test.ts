// The status counters of migration 0002 (lead_counts, attempt_counts, kept by triggers)
// against a fresh count(*) after every kind of write: imports and re-imports,
// suppression, a real campaign run through the engine, direct deletes and moves,
// cascades of a campaign's deletion, and the backfill of a database that had rows
// before the migration. Real SQLite files, no mocks.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { importLeads } from '../../src/leads/import.js';
import { readLeadCsv } from '../../src/leads/read-leads.js';
import { collectStatus } from '../../src/status/collect.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { campaignCounts, COUNTS_MIGRATION } from '../../src/store/counts.js';
import { openDatabase, storeSettings, type DatabaseHandle } from '../../src/store/database.js';
import { hasMigration, migrateToLatest } from '../../src/store/migrate.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';
import { suppressPendingLeads, syncSuppressions } from '../../src/store/suppressions.js';
import type { Database } from '../../src/store/types.js';
import { allSucceed, isQuiet, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { campaignConfig, insertAttempt, insertCampaign, insertLeads } from './status-fixture.js';

let dir: string;
let handle: DatabaseHandle | undefined;
let stack: Stack | null = null;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-counts-'));
});
afterEach(async () => {
  await stack?.close();
  stack = null;
  await handle?.close();
  handle = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The counters hold exactly what count(*) finds (states at 0 aside), and no state's count goes below 0. */
async function expectCountersMatch(db: Kysely<Database>): Promise<void> {
  const counted = await db
    .selectFrom('leads')
    .select(['campaign_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['campaign_id', 'state'])
    .orderBy('campaign_id')
    .orderBy('state')
    .execute();
  const kept = await keptLeadCounts(db);
  expect(kept.filter((r) => r.n !== 0)).toEqual(counted.map((r) => ({ ...r, n: Number(r.n) })));
  const attempts = await db
    .selectFrom('attempts')
    .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('campaign_id')
    .orderBy('campaign_id')
    .execute();
  expect(await db.selectFrom('attempt_counts').select(['campaign_id', 'n']).where('n', '<>', 0).orderBy('campaign_id').execute()).toEqual(attempts);
  expect(kept.filter((r) => r.n < 0)).toEqual([]);
  expect(await db.selectFrom('attempt_counts').select('n').where('n', '<', 0).execute()).toEqual([]);
}

/**
 * The kept lead counts by campaign and state: on PostgreSQL a state is kept in one row per
 * writing connection's slot (migration 0037), each of which may be below 0, and counts as
 * their sum, as src/store/counts.ts reads it.
 */
async function keptLeadCounts(db: Kysely<Database>): Promise<{ campaign_id: number; state: string; n: number }[]> {
  const rows = await db
    .selectFrom('lead_counts')
    .select(['campaign_id', 'state', (eb) => eb.fn.sum<number>('n').as('n')])
    .groupBy(['campaign_id', 'state'])
    .orderBy('campaign_id')
    .orderBy('state')
    .execute();
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

/** A migrated store: in `file` (SQLite), or the run's own (test-store: SQLite or PostgreSQL). */
async function createStore(file?: string): Promise<DatabaseHandle> {
  handle = file ? openDatabase(file) : await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  return handle;
}

function csv(name: string, lines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const CSV_HEADER = 'phone_number,first_name,timezone,secondary_phone_number_1';

describe('status counters', () => {
  it('are the database migration the status code reads', () => {
    expect(COUNTS_MIGRATION in migrations).toBe(true);
  });

  it('match count(*) after imports, re-imports, suppressions, deletes, moves and a cascade', async () => {
    const { db } = await createStore();
    if (testDialect === 'sqlite') expect((await storeSettings(handle!)).foreignKeys).toBe('1');
    const spring = (await upsertCampaign(db, campaignConfig('spring'), { timezone: 'UTC' }, 1)).id;
    const autumn = (await upsertCampaign(db, campaignConfig('autumn'), { timezone: 'UTC' }, 1)).id;
    const file = csv('spring.csv', [CSV_HEADER, '+15555550100,Ada,,+15555550900', '+15555550101,Ben,,', '12345,Cleo,,', '+15555550100,Ada again,,', '+15555550102,Dev,Nowhere/Zone,']);
    const load = (f: string, campaignId: number, now: number) => importLeads(db, { id: campaignId, allowDuplicates: false }, readLeadCsv(f), { now, sourceFile: f });

    expect(await load(file, spring, 10)).toMatchObject({ accepted: 2, invalid: 2, duplicates: 1 });
    await expectCountersMatch(db);
    expect(await load(file, spring, 20)).toMatchObject({ accepted: 0, unchanged: 2 });
    await expectCountersMatch(db);

    // A fixed invalid row replaces its placeholder (a delete and an insert in one batch);
    // a number on the suppression list comes in suppressed.
    await syncSuppressions(db, ['+15555550104', '+15555550101'], 30);
    fs.writeFileSync(file, [CSV_HEADER, '+15555550100,Ada L,,', '+15555550101,Ben,,', '+15555550103,Cleo fixed,,', '+15555550102,Dev,Nowhere/Zone,', '+15555550104,Eve,,'].join('\n'));
    expect(await load(file, spring, 40)).toMatchObject({ accepted: 1, updated: 1, suppressed: 1, invalid: 1 });
    await expectCountersMatch(db);
    expect(await suppressPendingLeads(db, 50)).toBe(1);
    await expectCountersMatch(db);

    const other = csv('autumn.csv', [CSV_HEADER, ...phoneNumbers(30).map((p) => `${p},x,,`)]);
    expect(await load(other, autumn, 60)).toMatchObject({ accepted: 30 });
    const [first, second] = await db.selectFrom('leads').select('id').where('campaign_id', '=', autumn).orderBy('id').limit(2).execute();
    for (const lead of [first!, second!]) await insertAttempt(db, { campaignId: autumn, leadId: lead.id, state: 'ended', createdAt: 70 });
    await db.updateTable('leads').set({ state: 'completed', updated_at: 70 }).where('id', '=', first!.id).execute();
    // Setting a state to the value it has already must not count twice.
    await db.updateTable('leads').set({ state: 'pending', updated_at: 71 }).where('campaign_id', '=', autumn).where('state', '=', 'pending').execute();
    await expectCountersMatch(db);

    // Deleting a lead cascades (foreign keys on) to its attempt: the cascaded delete fires
    // the attempts trigger. Then a lead (and its attempt) moves to another campaign.
    await db.deleteFrom('leads').where('id', '=', second!.id).execute();
    await expectCountersMatch(db);
    await db.updateTable('leads').set({ campaign_id: spring }).where('id', '=', first!.id).execute();
    await db.updateTable('attempts').set({ campaign_id: spring }).where('lead_id', '=', first!.id).execute();
    await expectCountersMatch(db);

    // A campaign's deletion cascades (foreign keys on) to its leads and attempts; the
    // triggers run for every cascaded row, and the campaign's counter rows go too.
    await db.deleteFrom('campaigns').where('id', '=', spring).execute();
    expect(await db.selectFrom('leads').select('id').where('campaign_id', '=', spring).execute()).toEqual([]);
    await expectCountersMatch(db);
    expect(await db.selectFrom('lead_counts').selectAll().where('campaign_id', '=', spring).execute()).toEqual([]);
    expect(await db.selectFrom('attempt_counts').selectAll().where('campaign_id', '=', spring).execute()).toEqual([]);
    const autumnCounts = (await campaignCounts(db)).get(autumn);
    expect(autumnCounts?.leads.pending).toBe(28);
    expect(autumnCounts?.attempts).toBe(0);
  });

  it('match count(*) at every moment of a real campaign: claims, retries, secondary contacts, refused numbers, suppression, completion', async () => {
    const [busy, secondary, suppressed, ...rest] = phoneNumbers(15) as [string, string, string, ...string[]];
    // E.164 for campaignd's import, but the service's own check refuses a leading 0 (400).
    const [refused, refusedAlone] = ['+0123456789', '+0123456788'];
    stack = await startStack({
      startEngine: false,
      campaigns: [
        {
          settings: { maxCallsInParallel: 3, maxRetries: 1, retryIntervalSeconds: 60, retryOn: ['busy', 'no-answer'] },
          leads: [{ phone: busy }, { phone: refused, secondary: [secondary] }, { phone: refusedAlone }, { phone: suppressed }, ...rest.slice(0, 6).map((phone) => ({ phone }))],
          rejected: [refused, refusedAlone],
        },
        { leads: rest.slice(6).map((phone) => ({ phone })) },
      ],
      fixedOutcomes: [
        { phone_number: busy, status: 'busy', duration: 2 },
        ...allSucceed([secondary, ...rest]),
      ],
    });
    const { db } = stack;
    await syncSuppressions(db, [suppressed], stack.clock.now());
    await suppressPendingLeads(db, stack.clock.now());
    await expectCountersMatch(db);

    await stack.startEngine();
    // Each check reads both sides in one transaction: a snapshot between two engine writes.
    let checks = 0;
    const deadline = Date.now() + 20_000;
    while (!(await isQuiet(db))) {
      await db.transaction().execute(async (trx) => expectCountersMatch(trx));
      checks++;
      if (Date.now() > deadline) throw new Error('the campaign did not finish in 20 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await expectCountersMatch(db);
    expect(checks).toBeGreaterThan(1);
    const states = await db.selectFrom('leads').select('state').distinct().orderBy('state').execute();
    expect(states.map((s) => s.state)).toEqual(['completed', 'invalid', 'reached-max-retries', 'suppressed']);
    // The report reads the counters: the same figures as counting.
    const report = await collectStatus(db, { now: stack.clock.now(), version: 't', isPidAlive: () => false });
    const total = await db.selectFrom('attempts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(report.campaigns.reduce((n, c) => n + c.attempts.total, 0)).toBe(Number(total.n));
    expect(report.campaigns.reduce((n, c) => n + c.leads.total, 0)).toBe(16);
  });

  it('are backfilled by the migration from a database that had rows at 0001, and status reads the same before and after', async () => {
    const file = path.join(dir, 'old.db');
    const old = openDatabase(file);
    await migrateToLatest(old.db, { clock: { now: () => 0 }, migrations: { '0001_initial': migrations['0001_initial']! } });
    const now = Date.UTC(2026, 10, 23, 10, 0, 0);
    const a = await insertCampaign(old.db, campaignConfig('a'));
    const b = await insertCampaign(old.db, campaignConfig('b', { timezone: 'America/New_York' }));
    await insertCampaign(old.db, campaignConfig('empty'));
    for (const [campaign, state, n] of [[a, 'pending', 5], [a, 'calling', 2], [a, 'completed', 3], [b, 'retry-scheduled', 4], [b, 'reached-max-retries', 2], [b, 'invalid', 1], [b, 'suppressed', 1]] as const) {
      const ids = await insertLeads(old.db, campaign, state, n, now - 20 * 60_000);
      for (const leadId of state === 'pending' || state === 'invalid' ? [] : ids) {
        await insertAttempt(old.db, { campaignId: campaign, leadId, state: state === 'calling' ? 'placed' : 'ended', createdAt: now - 30 * 60_000 });
      }
    }
    // A campaign deleted with foreign keys off (as the sqlite3 shell does by default)
    // leaves its leads behind: the backfill skips them instead of failing.
    const gone = await insertCampaign(old.db, campaignConfig('gone'));
    await insertLeads(old.db, gone, 'pending', 3);
    await old.close();
    const raw = openDatabase(file);
    await sql`pragma foreign_keys = off`.execute(raw.db);
    await raw.db.deleteFrom('campaigns').where('id', '=', gone).execute();
    await raw.close();

    // Status opened read-only on a database an older daemon has not migrated yet counts rows.
    const opts = { now, version: 't', isPidAlive: () => false };
    const reader = openDatabase(file, { readonly: true });
    expect(await hasMigration(reader.db, COUNTS_MIGRATION)).toBe(false);
    const before = await collectStatus(reader.db, opts);
    const beforeOne = await collectStatus(reader.db, { ...opts, campaign: 'b' });
    await reader.close();

    const { db } = await createStore(file);
    expect(await hasMigration(db, COUNTS_MIGRATION)).toBe(true);
    await expectCountersMatchExcept(db, gone);
    expect(await collectStatus(db, opts)).toEqual(before);
    expect(await collectStatus(db, { ...opts, campaign: 'b' })).toEqual(beforeOne);
    expect(before.campaigns.map((c) => [c.name, c.leads.total, c.attempts.total])).toEqual([
      ['a', 10, 5],
      ['b', 8, 7],
      ['empty', 0, 0],
    ]);
    expect(before.campaigns[0]?.completions_last_hour).toBe(3);
  });
});

/** expectCountersMatch, leaving out the leads of a campaign that no longer exists. */
async function expectCountersMatchExcept(db: Kysely<Database>, goneCampaign: number): Promise<void> {
  const orphans = await db.selectFrom('leads').select('id').where('campaign_id', '=', goneCampaign).execute();
  expect(orphans).toHaveLength(3);
  await db.deleteFrom('leads').where('campaign_id', '=', goneCampaign).execute();
  // Deleting the orphans decremented nothing (no counter row was made for them).
  await expectCountersMatch(db);
}

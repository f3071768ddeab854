// The intent row before make_call (rule 6) is committed with synchronous=FULL, so that a
// power cut cannot lose it (issue 11, part 4); everything else keeps NORMAL. Checked on a
// real SQLite file, reading the setting from inside the claim's own transaction. A store
// opened by the daemon's factory gets the same guarantee from a sync of its WAL file on
// libuv's thread pool after a NORMAL commit, so the fsync does not hold the daemon's thread.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { claimAttempts, claimAttemptsIn } from '../../src/store/attempts.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { openDatabase, storeSettings } from '../../src/store/database.js';
import { durableTransaction } from '../../src/store/durable.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';

// SQLite's numbers for PRAGMA synchronous.
const NORMAL = 1;
const FULL = 2;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-durable-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'campaignd.db');
}

/**
 * A store opened by the daemon's factory, then a second kysely over its own better-sqlite3
 * connection whose query log reads `synchronous` right after each statement, while the
 * statement's transaction is still open.
 */
async function probedStore(): Promise<{ db: Kysely<Database>; raw: SqliteDatabase.Database; seen: { sql: string; synchronous: number }[] }> {
  const file = tempFile();
  const handle = openDatabase(file);
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  await handle.close();
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  const seen: { sql: string; synchronous: number }[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: raw }),
    log: (event) => {
      if (event.level === 'query') seen.push({ sql: event.query.sql, synchronous: Number(raw.pragma('synchronous', { simple: true })) });
    },
  });
  cleanups.push(() => db.destroy());
  return { db, raw, seen };
}

function campaign(name: string): CampaignConfig {
  return {
    name, file: `/x/${name}.yaml`, assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
    maxCallsInParallel: 10, maxRetries: 0, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: ['busy'], blackoutDates: [],
    initialStatus: 'running', leads: {}, allowDuplicates: false,
  };
}

async function* rows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  for (const [i, phone] of phones.entries()) yield { ok: true, line: i + 2, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

describe('the claim before make_call (rule 6)', () => {
  it('commits the intent row with synchronous=FULL, and the connection is back to NORMAL after', async () => {
    const { db, raw, seen } = await probedStore();
    const row = await upsertCampaign(db, campaign('north'), { timezone: 'UTC' }, 1_000);
    await importLeads(db, { id: row.id, allowDuplicates: false }, rows(['+4915100000001']), { now: 1_000, sourceFile: '/x/north.csv' });
    const lead = await db.selectFrom('leads').select('id').executeTakeFirstOrThrow();
    seen.length = 0;

    const [result] = await claimAttempts(db, [
      { campaignId: row.id, leadId: lead.id, contactPosition: 0, phoneNumber: '+4915100000001', assistantId: 1, owner: 'test', now: 2_000 },
    ]);

    expect(result?.ok).toBe(true);
    const insert = seen.find((q) => /^insert into "attempts"/i.test(q.sql));
    expect(insert, `queries seen: ${seen.map((q) => q.sql).join(' | ')}`).toBeDefined();
    // Every statement of the claim, the lead update and the intent insert included.
    const claimStatements = seen.filter((q) => !/^pragma/i.test(q.sql));
    expect(claimStatements.length).toBeGreaterThanOrEqual(3);
    expect(claimStatements.map((q) => q.synchronous)).toEqual(claimStatements.map(() => FULL));
    expect(raw.pragma('synchronous', { simple: true })).toBe(NORMAL);
  });

  it("a group commit commits a batch holding a claim (durable work) with synchronous=FULL, and a batch without one with NORMAL", async () => {
    const { db, raw, seen } = await probedStore();
    const row = await upsertCampaign(db, campaign('north'), { timezone: 'UTC' }, 1_000);
    await importLeads(db, { id: row.id, allowDuplicates: false }, rows(['+4915100000001', '+4915100000002']), { now: 1_000, sourceFile: '/x/north.csv' });
    const leads = await db.selectFrom('leads').select(['id', 'phone_number']).orderBy('id').execute();
    const commit = createGroupCommit(db);
    seen.length = 0;

    const input = (i: number) => ({ campaignId: row.id, leadId: leads[i]!.id, contactPosition: 0, phoneNumber: leads[i]!.phone_number, assistantId: 1, owner: 'test', now: 2_000 });
    // One turn: a plain read and two claims share one durable commit.
    const [, a, b] = await Promise.all([
      commit.run((trx) => trx.selectFrom('suppressions').select('phone_number').execute()),
      commit.run((trx) => claimAttemptsIn(trx, [input(0)]), { durable: true }),
      commit.run((trx) => claimAttemptsIn(trx, [input(1)]), { durable: true }),
    ]);
    expect(a![0]!.ok && b![0]!.ok).toBe(true);
    const batch = seen.filter((q) => !/^pragma/i.test(q.sql));
    expect(batch.filter((q) => /^insert into "attempts"/i.test(q.sql))).toHaveLength(2);
    expect(batch.filter((q) => /^commit/i.test(q.sql))).toHaveLength(1);
    expect(batch.map((q) => q.synchronous)).toEqual(batch.map(() => FULL));
    expect(raw.pragma('synchronous', { simple: true })).toBe(NORMAL);
    // The next turn holds no claim: NORMAL.
    seen.length = 0;
    await commit.run((trx) => trx.selectFrom('campaigns').select('id').execute());
    expect(seen.find((q) => q.sql.includes('"campaigns"'))?.synchronous).toBe(NORMAL);
  });

  it('returns to NORMAL when the transaction rolls back', async () => {
    const { db, raw } = await probedStore();
    await expect(
      durableTransaction(db, async (trx) => {
        expect(Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(trx)).rows[0]?.synchronous)).toBe(FULL);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(raw.pragma('synchronous', { simple: true })).toBe(NORMAL);
  });

  it('keeps other writes of the same connection on NORMAL, even when queued during a durable one', async () => {
    const { db, seen } = await probedStore();
    const durable = durableTransaction(db, async (trx) => {
      await trx.selectFrom('campaigns').select('id').execute();
    });
    const other = db.transaction().execute(async (trx) => {
      await trx.selectFrom('leads').select('id').execute();
    });
    await Promise.all([durable, other]);
    expect(seen.find((q) => q.sql.includes('"campaigns"'))?.synchronous).toBe(FULL);
    expect(seen.find((q) => q.sql.includes('"leads"'))?.synchronous).toBe(NORMAL);
  });

  it('SQLite refuses the switch inside a transaction, which is why it wraps BEGIN and COMMIT', () => {
    const raw = new SqliteDatabase(':memory:');
    cleanups.push(() => {
      raw.close();
    });
    raw.exec('begin');
    expect(() => raw.pragma('synchronous = FULL')).toThrow(/inside a transaction/);
    raw.exec('rollback');
  });

  it('leaves the daemon connection on NORMAL outside the claim', async () => {
    const handle = openDatabase(tempFile());
    cleanups.push(() => handle.close());
    await migrateToLatest(handle.db, { clock: { now: () => 0 } });
    await durableTransaction(handle.db, async () => undefined);
    expect((await storeSettings(handle)).synchronous).toBe(String(NORMAL));
  });

  /** Follows the WAL file's sync: what is opened, and each datasync's start and end; `fail` makes the next datasync throw. */
  function followWalSync(events: string[], fail: { next: boolean }): void {
    const realOpen = fsp.open.bind(fsp);
    vi.spyOn(fsp, 'open').mockImplementation(async (file, flags) => {
      const h = await realOpen(file, flags);
      events.push(`open ${path.basename(String(file))}`);
      const datasync = h.datasync.bind(h);
      h.datasync = async () => {
        events.push('datasync start');
        if (fail.next) {
          fail.next = false;
          throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        }
        await datasync();
        events.push('datasync end');
      };
      return h;
    });
  }

  async function factoryStoreWithLeads(count: number): Promise<{ handle: ReturnType<typeof openDatabase>; inputs: Parameters<typeof claimAttempts>[1] }> {
    const handle = openDatabase(tempFile());
    cleanups.push(() => handle.close());
    await migrateToLatest(handle.db, { clock: { now: () => 0 } });
    const row = await upsertCampaign(handle.db, campaign('north'), { timezone: 'UTC' }, 1_000);
    const phones = Array.from({ length: count }, (_, i) => `+491510000000${i + 1}`);
    await importLeads(handle.db, { id: row.id, allowDuplicates: false }, rows(phones), { now: 1_000, sourceFile: '/x/north.csv' });
    const leads = await handle.db.selectFrom('leads').select(['id', 'phone_number']).orderBy('id').execute();
    return { handle, inputs: leads.map((l) => ({ campaignId: row.id, leadId: l.id, contactPosition: 0, phoneNumber: l.phone_number, assistantId: 1, owner: 'test', now: 2_000 })) };
  }

  it("on a store opened by the factory, a claim resolves only after its WAL file was synced (off the thread), and the connection stays on NORMAL", async () => {
    const { handle, inputs } = await factoryStoreWithLeads(2);
    const events: string[] = [];
    followWalSync(events, { next: false });

    const [first] = await claimAttempts(handle.db, [inputs[0]!]);
    events.push('claimed');
    const [second] = await claimAttempts(handle.db, [inputs[1]!]);
    events.push('claimed');

    expect(first?.ok && second?.ok).toBe(true);
    // The file is opened once and kept; every durable commit syncs it before it returns.
    expect(events).toEqual(['open campaignd.db-wal', 'datasync start', 'datasync end', 'claimed', 'datasync start', 'datasync end', 'claimed']);
    expect((await storeSettings(handle)).synchronous).toBe(String(NORMAL));
  });

  it('a WAL sync that fails fails the durable commit (its caller must not act on it), and the next one syncs again', async () => {
    const { handle, inputs } = await factoryStoreWithLeads(2);
    const events: string[] = [];
    const fail = { next: true };
    followWalSync(events, fail);

    await expect(claimAttempts(handle.db, [inputs[0]!])).rejects.toThrow(/EIO/);
    const [second] = await claimAttempts(handle.db, [inputs[1]!]);

    expect(second?.ok).toBe(true);
    expect(events).toEqual(['open campaignd.db-wal', 'datasync start', 'open campaignd.db-wal', 'datasync start', 'datasync end']);
  });
});

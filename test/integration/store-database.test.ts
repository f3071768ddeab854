import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseMissingError, openDatabase, storeSettings, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest, schemaStatus } from '../../src/store/migrate.js';

const handles: DatabaseHandle[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-store-'));
  dirs.push(dir);
  return dir;
}

function open(file: string, opts?: Parameters<typeof openDatabase>[1]): DatabaseHandle {
  const h = openDatabase(file, opts);
  handles.push(h);
  return h;
}

const campaignRow = (name: string) => ({
  name,
  state: 'running' as const,
  assistant_id: 1,
  timezone: null,
  max_calls_in_parallel: 1,
  remote_campaign_id: null,
  config_json: '{}',
  config_file: null,
  problem: null,
  created_at: 0,
  updated_at: 0,
  completed_at: null,
});

describe('openDatabase', () => {
  it('creates the folder and a file only its owner can read, in WAL mode', async () => {
    const file = path.join(tempDir(), 'nested', 'data', 'campaignd.db');
    const h = open(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(h.file).toBe(file);
    expect(await storeSettings(h)).toEqual({ journalMode: 'wal', synchronous: '1', foreignKeys: '1', busyTimeout: '5000' });
  });

  it('gives every connection an 8 MiB page cache, read-only ones too', async () => {
    const cacheKiB = async (h: DatabaseHandle): Promise<number> => {
      const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(h.db);
      return -Number(rows[0]?.cache_size);
    };
    const file = path.join(tempDir(), 'campaignd.db');
    expect(await cacheKiB(open(file))).toBe(8 * 1024);
    expect(await cacheKiB(open(file, { readonly: true }))).toBe(8 * 1024);
  });

  it('keeps the mode an operator chose for an existing file', async () => {
    const file = path.join(tempDir(), 'campaignd.db');
    fs.writeFileSync(file, '');
    fs.chmodSync(file, 0o640);
    open(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
  });

  it('supports :memory: and a custom busy timeout', async () => {
    const h = open(':memory:', { busyTimeoutMs: 1234 });
    await migrateToLatest(h.db, { clock: { now: () => 0 } });
    expect((await storeSettings(h)).busyTimeout).toBe('1234');
    expect((await storeSettings(h)).foreignKeys).toBe('1');
  });

  it('refuses a readonly open of a missing file without creating it', () => {
    const file = path.join(tempDir(), 'none.db');
    expect(() => openDatabase(file, { readonly: true })).toThrow(DatabaseMissingError);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('enforces foreign keys', async () => {
    const h = open(':memory:');
    await migrateToLatest(h.db, { clock: { now: () => 0 } });
    await expect(
      h.db.insertInto('leads').values({ campaign_id: 99, dedupe_key: 'k', phone_number: '+1', state: 'pending', timezone: null, state_reason: null, next_due_at: 0, remote_lead_id: null, source_file: null, source_line: null, created_at: 0, updated_at: 0 }).execute(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });

  it('lets a readonly connection read while a writer writes', async () => {
    const file = path.join(tempDir(), 'shared.db');
    const writer = open(file);
    await migrateToLatest(writer.db, { clock: { now: () => 0 } });
    await writer.db.insertInto('campaigns').values(campaignRow('a')).execute();
    const reader = open(file, { readonly: true });
    expect((await schemaStatus(reader.db)).pending).toEqual([]);

    // The writer holds an open write transaction; the reader still sees the last commit
    // at once (WAL), without waiting for the busy timeout.
    await writer.db.transaction().execute(async (trx) => {
      await trx.insertInto('campaigns').values(campaignRow('b')).execute();
      const seen = await reader.db.selectFrom('campaigns').select('name').orderBy('name').execute();
      expect(seen.map((r) => r.name)).toEqual(['a']);
    });
    const after = await reader.db.selectFrom('campaigns').select('name').orderBy('name').execute();
    expect(after.map((r) => r.name)).toEqual(['a', 'b']);
    await expect(reader.db.insertInto('campaigns').values(campaignRow('c')).execute()).rejects.toThrow(/readonly/);
  });

  it('checkpoints on a connection of its own in a worker thread, never on the caller\'s', async () => {
    const file = path.join(tempDir(), 'checkpoint.db');
    const h = openDatabase(file);
    await sql`create table filler (id integer primary key, body text not null)`.execute(h.db);
    await h.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 2_000; i++) await sql`insert into filler (body) values (${'x'.repeat(500)})`.execute(trx);
    });
    // The rows are in the write-ahead log; the database file has not grown yet.
    const before = fs.statSync(file).size;
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    await h.checkpoint();
    // On the thread, the checkpoint would have resolved before the event loop turned once.
    expect(turned).toBe(true);
    expect(fs.statSync(file).size).toBeGreaterThan(before + 500_000);
    // And again: the worker answers every checkpoint, in order.
    await Promise.all([h.checkpoint(), h.checkpoint()]);
    // Its connection closes first, so the store's own, the last, removes the log.
    await h.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const again = open(file, { readonly: true });
    expect(Number((await sql<{ n: number }>`select count(*) as n from filler`.execute(again.db)).rows[0]!.n)).toBe(2_000);
  });
});

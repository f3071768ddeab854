import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { DatabaseMissingError, openDatabase, storeSettings, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest, NewerSchemaError, schemaStatus } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';

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
    await migrateToLatest(h.db);
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
    await migrateToLatest(h.db);
    await expect(
      h.db.insertInto('leads').values({ campaign_id: 99, dedupe_key: 'k', phone_number: '+1', state: 'pending', timezone: null, state_reason: null, next_due_at: 0, remote_lead_id: null, source_file: null, source_line: null, created_at: 0, updated_at: 0 }).execute(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });

  it('lets a readonly connection read while a writer writes', async () => {
    const file = path.join(tempDir(), 'shared.db');
    const writer = open(file);
    await migrateToLatest(writer.db);
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
});

describe('migrations', () => {
  it('apply from empty, record their version and time, and do nothing when re-run', async () => {
    const h = open(':memory:');
    const clock = new ManualClock(1_700_000_000_000);
    expect(await schemaStatus(h.db)).toMatchObject({ applied: [], current: null, pending: Object.keys(migrations) });
    expect(await migrateToLatest(h.db, { clock })).toEqual({ applied: Object.keys(migrations) });
    expect(await migrateToLatest(h.db, { clock })).toEqual({ applied: [] });
    const rows = await (h.db as unknown as Kysely<any>).selectFrom('schema_migrations').selectAll().execute();
    expect(rows).toEqual(Object.keys(migrations).map((version) => ({ version, applied_at: 1_700_000_000_000 })));
    const tables = (await h.db.introspection.getTables()).map((t) => t.name).sort();
    expect(tables).toEqual(['attempt_counts', 'attempts', 'call_results', 'campaigns', 'daemons', 'events', 'ha_lease', 'hook_outbox', 'hook_states', 'hook_subscriptions', 'lead_contacts', 'lead_counts', 'leads', 'schema_migrations', 'suppressions']);
  });

  it('refuses a database written by a newer campaignd', async () => {
    const h = open(':memory:');
    await migrateToLatest(h.db);
    await (h.db as unknown as Kysely<any>).insertInto('schema_migrations').values({ version: '9999_future', applied_at: 0 }).execute();
    const err = await migrateToLatest(h.db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NewerSchemaError);
    const latest = Object.keys(migrations).sort().at(-1)!.split('_')[0];
    expect((err as Error).message).toBe(`database schema 9999 is newer than this campaignd (knows up to ${latest}): upgrade campaignd or use another database`);
    expect((await schemaStatus(h.db)).unknown).toEqual(['9999_future']);
  });

  it('rolls back a failing migration with its version row', async () => {
    const h = open(':memory:');
    const broken = {
      '0001_initial': migrations['0001_initial']!,
      '0002_broken': {
        async up(db: Kysely<any>) {
          await db.schema.createTable('half_done').addColumn('x', 'integer').execute();
          throw new Error('boom');
        },
        async down() {},
      },
    };
    await expect(migrateToLatest(h.db, { migrations: broken })).rejects.toThrow('boom');
    const status = await schemaStatus(h.db, broken);
    expect(status.applied).toEqual(['0001_initial']);
    expect(status.pending).toEqual(['0002_broken']);
    expect((await h.db.introspection.getTables()).map((t) => t.name)).not.toContain('half_done');
  });

  it('two processes migrating the same file at once apply each step once', async () => {
    const file = path.join(tempDir(), 'race.db');
    const script = `
      const { openDatabase } = await import(${JSON.stringify(path.resolve('src/store/database.ts'))});
      const { migrateToLatest } = await import(${JSON.stringify(path.resolve('src/store/migrate.ts'))});
      const h = openDatabase(${JSON.stringify(file)});
      process.stdout.write(JSON.stringify(await migrateToLatest(h.db)));
      await h.close();`;
    const run = (): Promise<{ applied: string[] }> =>
      new Promise((resolve, reject) => {
        execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd() }, (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as { applied: string[] }),
        );
      });
    const [ra, rb] = await Promise.all([run(), run()]);
    expect([...ra.applied, ...rb.applied].sort()).toEqual(Object.keys(migrations));
    const h = open(file, { readonly: true });
    expect((await schemaStatus(h.db)).pending).toEqual([]);
  });
});

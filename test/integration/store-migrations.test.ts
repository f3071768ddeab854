// The migrator on both dialects (one migration history, docs/design.md §10): from an
// empty database to the latest schema, a newer schema refused, a failing step rolled
// back, and two processes migrating one database at once applying each step once.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest, NewerSchemaError, schemaStatus } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore, testDatabaseTarget, testDialect, type TestDatabaseTarget } from '../helpers/test-store.js';

const handles: DatabaseHandle[] = [];
const targets: TestDatabaseTarget[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  for (const t of targets.splice(0)) await t.drop();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function open(): Promise<DatabaseHandle> {
  const h = await openTestStore();
  handles.push(h);
  return h;
}

describe(`migrations (${testDialect})`, () => {
  it('apply from empty, record their version and time, and do nothing when re-run', async () => {
    const h = await open();
    const clock = new ManualClock(1_700_000_000_000);
    expect(await schemaStatus(h.db)).toMatchObject({ applied: [], current: null, pending: Object.keys(migrations) });
    expect(await migrateToLatest(h.db, { clock })).toEqual({ applied: Object.keys(migrations) });
    expect(await migrateToLatest(h.db, { clock })).toEqual({ applied: [] });
    const rows = await (h.db as unknown as Kysely<any>).selectFrom('schema_migrations').selectAll().orderBy('version').execute();
    expect(rows).toEqual(Object.keys(migrations).map((version) => ({ version, applied_at: 1_700_000_000_000 })));
    const tables = (await h.db.introspection.getTables()).map((t) => t.name).sort();
    expect(tables).toEqual(['account_leases', 'api_idempotency', 'api_keys', 'attempt_counts', 'attempts', 'call_results', 'callbacks', 'campaign_spend', 'campaigns', 'daemons', 'dashboard_sessions', 'events', 'ha_lease', 'hook_outbox', 'hook_states', 'hook_subscriptions', 'lead_contacts', 'lead_counts', 'lead_variant_figures', 'leads', 'lease_instances', 'predial_counts', 'schema_migrations', 'suppressions', 'variant_counts', 'variant_successes', 'webhook_inbox']);
  });

  it('refuses a database written by a newer campaignd', async () => {
    const h = await open();
    await migrateToLatest(h.db, { clock: { now: () => 0 } });
    await (h.db as unknown as Kysely<any>).insertInto('schema_migrations').values({ version: '9999_future', applied_at: 0 }).execute();
    const err = await migrateToLatest(h.db, { clock: { now: () => 0 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NewerSchemaError);
    const latest = Object.keys(migrations).sort().at(-1)!.split('_')[0];
    expect((err as Error).message).toBe(`database schema 9999 is newer than this campaignd (knows up to ${latest}): upgrade campaignd or use another database`);
    expect((await schemaStatus(h.db)).unknown).toEqual(['9999_future']);
  });

  it('rolls back a failing migration with its version row', async () => {
    const h = await open();
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
    await expect(migrateToLatest(h.db, { clock: { now: () => 0 }, migrations: broken })).rejects.toThrow('boom');
    const status = await schemaStatus(h.db, broken);
    expect(status.applied).toEqual(['0001_initial']);
    expect(status.pending).toEqual(['0002_broken']);
    expect((await h.db.introspection.getTables()).map((t) => t.name)).not.toContain('half_done');
  });

  it('two processes migrating the same database at once apply each step once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-migrate-race-'));
    dirs.push(dir);
    const target = await testDatabaseTarget(dir);
    targets.push(target);
    const script = `
      const { openStore } = await import(${JSON.stringify(path.resolve('src/store/open-store.ts'))});
      const { migrateToLatest } = await import(${JSON.stringify(path.resolve('src/store/migrate.ts'))});
      const h = await openStore(process.env.TARGET, { password: process.env.PGPASSWORD });
      process.stdout.write(JSON.stringify(await migrateToLatest(h.db, { clock: { now: () => 0 } })));
      await h.close();`;
    const run = (): Promise<{ applied: string[] }> =>
      new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script],
          { cwd: process.cwd(), env: { ...process.env, ...target.env, TARGET: target.database } },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as { applied: string[] })),
        );
      });
    const [ra, rb] = await Promise.all([run(), run()]);
    expect([...ra.applied, ...rb.applied].sort()).toEqual(Object.keys(migrations));
    const h = await target.open({ readonly: true });
    handles.push(h);
    expect((await schemaStatus(h.db)).pending).toEqual([]);
  });
  it('0009 drops the primary number from lead_contacts, keeps the secondary ones, and down puts it back', async () => {
    const h = await open();
    const db = h.db as unknown as Kysely<any>;
    const upTo0008 = Object.fromEntries(Object.entries(migrations).filter(([v]) => v < '0009'));
    await migrateToLatest(h.db, { clock: { now: () => 0 }, migrations: upTo0008 });
    await db.insertInto('campaigns').values({ name: 'c', state: 'active', config_json: '{}', assistant_id: 1, max_calls_in_parallel: 1, created_at: 0, updated_at: 0 }).execute();
    const campaign = await db.selectFrom('campaigns').select('id').executeTakeFirstOrThrow();
    const lead = (key: string, phone: string, state: string) =>
      db.insertInto('leads').values({ campaign_id: campaign.id, dedupe_key: key, phone_number: phone, variables_json: '{}', state, next_due_at: null, created_at: 0, updated_at: 0 }).returning('id').executeTakeFirstOrThrow();
    const a = await lead('+15550100', '+15550100', 'pending');
    const b = await lead('invalid:f:3', 'n/a', 'invalid');
    // As imports before 0009 wrote them: the primary at position 0, then the secondaries.
    await db.insertInto('lead_contacts').values([
      { lead_id: a.id, position: 0, phone_number: '+15550100' },
      { lead_id: a.id, position: 1, phone_number: '+15550101' },
      { lead_id: a.id, position: 2, phone_number: '+15550102' },
    ]).execute();
    const contacts = () => db.selectFrom('lead_contacts').select(['lead_id', 'position', 'phone_number']).orderBy('lead_id').orderBy('position').execute();

    await migrateToLatest(h.db, { clock: { now: () => 0 } });
    expect(await contacts()).toEqual([
      { lead_id: a.id, position: 1, phone_number: '+15550101' },
      { lead_id: a.id, position: 2, phone_number: '+15550102' },
    ]);
    await migrations['0009_primary_not_in_contacts']!.down(db);
    // Invalid leads never had contacts, before or after.
    expect((await contacts()).map((c) => [c.lead_id, c.position])).toEqual([[a.id, 0], [a.id, 1], [a.id, 2]]);
    expect((await contacts()).some((c) => c.lead_id === b.id)).toBe(false);
  });

  it('0016 makes a cancelled lead final for the lead.final hook, and down takes it back', async () => {
    const h = await open();
    const db = h.db as unknown as Kysely<any>;
    await migrateToLatest(h.db, { clock: { now: () => 0 } });
    await db.insertInto('campaigns').values({ name: 'c', state: 'running', config_json: '{}', assistant_id: 1, max_calls_in_parallel: 1, created_at: 0, updated_at: 0 }).execute();
    const campaign = await db.selectFrom('campaigns').select('id').executeTakeFirstOrThrow();
    await db.insertInto('hook_subscriptions').values({ hook_url: 'http://127.0.0.1:9/h', type: 'lead.final' }).execute();
    const lead = (key: string, state: string) =>
      db.insertInto('leads').values({ campaign_id: campaign.id, dedupe_key: key, phone_number: key, variables_json: '{}', state, next_due_at: null, created_at: 0, updated_at: 0 }).returning('id').executeTakeFirstOrThrow();
    const finals = async () => (await db.selectFrom('hook_outbox').select('lead_id').orderBy('id').execute()).map((r) => Number(r.lead_id));
    const a = await lead('+15550100', 'pending');
    await db.updateTable('leads').set({ state: 'cancelled' }).where('id', '=', a.id).execute();
    const b = await lead('+15550101', 'cancelled');
    expect(await finals()).toEqual([Number(a.id), Number(b.id)]);

    await migrations['0016_lead_cancelled']!.down(db);
    const c = await lead('+15550102', 'pending');
    await db.updateTable('leads').set({ state: 'cancelled' }).where('id', '=', c.id).execute();
    await lead('+15550103', 'cancelled');
    await lead('+15550104', 'invalid');
    expect((await finals()).length).toBe(3);
    await migrations['0016_lead_cancelled']!.up(db);
    await db.updateTable('leads').set({ state: 'pending' }).where('id', '=', c.id).execute();
    await db.updateTable('leads').set({ state: 'cancelled' }).where('id', '=', c.id).execute();
    expect((await finals()).at(-1)).toBe(Number(c.id));
  });
});

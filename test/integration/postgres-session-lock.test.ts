// The migration and setup locks (src/store/session-lock.ts) on a real server: an instance
// frozen while it holds one (SIGSTOP: its socket stays open, the server sees an idle session)
// no longer holds up every other instance's start-up and reload. The waiter ends the frozen
// holder's session once it has been silent for the bound, and gets the lock; the holder,
// woken, fails its next statement. A live holder, busy for longer than the bound, is waited
// for and never ended.
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, MIGRATION_LOCK_KEY, schemaStatus } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { SETUP_LOCK_KEY, withSetupLock } from '../../src/store/setup-lock.js';
import { systemClock } from '../../src/time/clock.js';
import { spawnNode, stopAllProcesses } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await stopAllProcesses();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function database(): Promise<{ url: string; admin: pg.Client }> {
  const db = await createTestDatabase();
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  cleanups.push(db.drop, () => admin.end());
  return { url: db.url, admin };
}

/** Whether some session holds advisory lock `key` (as pg_try_advisory_lock in another session would see). */
async function lockHeld(admin: pg.Client, key: number): Promise<boolean> {
  const { rows } = await admin.query<{ got: boolean }>('select pg_try_advisory_lock($1) as got', [key]);
  if (rows[0]!.got) await admin.query('select pg_advisory_unlock($1)', [key]);
  return !rows[0]!.got;
}

describe('a session lock held by a frozen instance (PostgreSQL)', () => {
  it('is freed by the waiter once the holder has been silent for the bound; the holder, woken, fails', async () => {
    const { url, admin } = await database();
    // The holder: a real process running the real withSetupLock, which stops itself inside it.
    const script = `
      const { openPostgres } = await import(${JSON.stringify(path.resolve('src/store/postgres.ts'))});
      const { withSetupLock } = await import(${JSON.stringify(path.resolve('src/store/setup-lock.ts'))});
      const { sql } = await import('kysely');
      const h = openPostgres(process.env.URL);
      try {
        await withSetupLock(h.db, async (conn) => {
          const { rows } = await sql\`select pg_backend_pid() as pid\`.execute(conn);
          process.stdout.write('holding ' + rows[0].pid + '\\n');
          process.kill(process.pid, 'SIGSTOP');
          await sql\`select 1\`.execute(conn);
          process.stdout.write('went on\\n');
        });
      } catch (err) {
        process.stdout.write('failed: ' + err.message + '\\n');
        process.exitCode = 3;
      } finally {
        await h.close().catch(() => {});
      }`;
    const holder = spawnNode('holder', '--import', ['tsx', '--input-type=module', '-e', script], { env: { URL: url } });
    const holderPid = Number(/holding (\d+)/.exec(await holder.waitForLine(/^holding \d+/))![1]);
    expect(await lockHeld(admin, SETUP_LOCK_KEY)).toBe(true);

    const waiter = openPostgres(url);
    cleanups.push(() => waiter.close());
    const ended: { pid: number; idleMs: number }[] = [];
    let ranWhileHeld = false;
    let waitings = 0;
    const started = performance.now();
    await withSetupLock(
      waiter.db,
      async () => {
        ranWhileHeld = await lockHeld(admin, SETUP_LOCK_KEY);
      },
      { frozenHolderMs: 600, onFrozenHolderEnded: (h) => ended.push(h), onWaiting: () => waitings++ },
    );
    expect(waitings).toBe(1);
    expect(ended.map((h) => h.pid)).toEqual([holderPid]);
    expect(ended[0]!.idleMs).toBeGreaterThanOrEqual(600);
    expect(performance.now() - started).toBeGreaterThanOrEqual(500);
    expect(ranWhileHeld).toBe(true);
    expect(await lockHeld(admin, SETUP_LOCK_KEY)).toBe(false);

    // Woken, the holder's next statement fails: it never goes on as if it held the lock.
    holder.child.kill('SIGCONT');
    expect((await holder.exited).code).toBe(3);
    expect(holder.stdout()).toMatch(/failed: /);
    expect(holder.stdout()).not.toMatch(/went on/);
  });

  it('a live holder is waited for however long it works, and never ended', async () => {
    const { url, admin } = await database();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query('select pg_advisory_lock($1)', [SETUP_LOCK_KEY]);
    // Busy for 1.6 s, four times the bound: statements one after the other (its idle gaps
    // are a round trip each) and one long statement.
    const work = (async () => {
      for (let i = 0; i < 8; i++) await holder.query('select pg_sleep(0.1)');
      await holder.query('select pg_sleep(0.8)');
      const releasedAt = performance.now();
      await holder.query('select pg_advisory_unlock($1)', [SETUP_LOCK_KEY]);
      return releasedAt;
    })();

    const waiter = openPostgres(url);
    cleanups.push(() => waiter.close());
    const ended: unknown[] = [];
    let gotAt = 0;
    await withSetupLock(
      waiter.db,
      async () => {
        gotAt = performance.now();
      },
      { frozenHolderMs: 400, onFrozenHolderEnded: (h) => ended.push(h) },
    );
    expect(ended).toEqual([]);
    expect(gotAt).toBeGreaterThanOrEqual(await work);
    // The holder's session is still there.
    expect((await holder.query<{ one: number }>('select 1 as one')).rows[0]!.one).toBe(1);
    expect((await admin.query<{ n: string }>('select count(*) as n from pg_stat_activity where pid = $1', [(holder as unknown as { processID: number }).processID])).rows[0]!.n).toBe('1');
  });

  it('a holder waiting on something else (the service) keeps its session alive and is not ended', async () => {
    const { url } = await database();
    const holderStore = openPostgres(url);
    const waiter = openPostgres(url);
    cleanups.push(() => holderStore.close(), () => waiter.close());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = withSetupLock(
      holderStore.db,
      async (conn) => {
        await sql`select 1`.execute(conn);
        held();
        // No statement of its own meanwhile: as the sync does while it lists assistants.
        await released;
        return (await sql<{ one: number }>`select 1 as one`.execute(conn)).rows[0]!.one;
      },
      { frozenHolderMs: 600, keepalive: systemClock },
    );
    await holding;
    const ended: unknown[] = [];
    let waiterGot = false;
    const waiting = withSetupLock(waiter.db, async () => (waiterGot = true), { frozenHolderMs: 600, onFrozenHolderEnded: (h) => ended.push(h) });
    // Three times the bound with the holder silent but for its keepalives.
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    expect(waiterGot).toBe(false);
    release();
    expect(await holder).toBe(1);
    await waiting;
    expect(waiterGot).toBe(true);
    expect(ended).toEqual([]);
  });

  it('migrating waits for a frozen migration no longer than the bound', async () => {
    const { url } = await database();
    // As a frozen `campaignd migrate` leaves it: a session holding the migration lock, silent.
    const frozen = new pg.Client({ connectionString: url });
    await frozen.connect();
    frozen.on('error', () => undefined);
    cleanups.push(() => frozen.end().catch(() => undefined));
    await frozen.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);

    const store = openPostgres(url);
    cleanups.push(() => store.close());
    const ended: { pid: number }[] = [];
    await migrateToLatest(store.db, { clock: { now: () => 0 }, frozenHolderMs: 300, onFrozenHolderEnded: (h) => ended.push(h) });
    expect(ended).toHaveLength(1);
    expect((await schemaStatus(store.db)).pending).toEqual([]);
    await expect(frozen.query('select 1')).rejects.toThrow();
    // The pinned connection is the store's again, without the step's lock_timeout.
    expect((await sql<{ v: string }>`select current_setting('lock_timeout') as v`.execute(store.db)).rows[0]!.v).toBe('5s');
  });
});

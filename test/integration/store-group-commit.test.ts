// Group commit (src/store/group-commit.ts) on a real SQLite file, checked from a second
// connection: work queued in one turn shares one transaction, each caller resumes only
// after the commit, and a failing item fails alone without undoing the others.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql, type Transaction } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';

let dir: string;
let handle: DatabaseHandle;
let reader: SqliteDatabase.Database;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-group-commit-'));
  handle = openDatabase(path.join(dir, 'store.db'));
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  reader = new SqliteDatabase(path.join(dir, 'store.db'), { readonly: true });
});
afterEach(async () => {
  reader.close();
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A deferral the test fires by hand, so that "one turn" is exactly what the test says. */
function manualTurns(): { defer: (fn: () => void) => void; turn: () => void; pending: () => number } {
  const queued: (() => void)[] = [];
  return { defer: (fn) => queued.push(fn), turn: () => queued.splice(0).forEach((fn) => fn()), pending: () => queued.length };
}

/**
 * Fires the turns a flush asks for (each batch after the first waits for one) until `work`
 * has settled; a durable batch's sync runs on the thread pool meanwhile.
 */
async function turnUntilDone(turns: ReturnType<typeof manualTurns>, work: Promise<unknown>): Promise<void> {
  let settled = false;
  void work.finally(() => (settled = true)).catch(() => undefined);
  while (!settled) {
    turns.turn();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const insertSuppression = (phone: string) => async (trx: Transaction<Database>) => {
  await trx.insertInto('suppressions').values({ phone_number: phone, source: 'test', added_at: 1 }).execute();
  return phone;
};
const visible = (): string[] => (reader.prepare('select phone_number from suppressions order by phone_number').all() as { phone_number: string }[]).map((r) => r.phone_number);

describe('group commit', () => {
  it('runs the work queued in one turn in one transaction, and resolves each caller after the commit', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer });
    const seen = new Set<Transaction<Database>>();
    const work = (phone: string) => async (trx: Transaction<Database>) => {
      seen.add(trx);
      return insertSuppression(phone)(trx);
    };
    const results = [commit.run(work('+491')), commit.run(work('+492')), commit.run(work('+493'))];
    expect(turns.pending()).toBe(1);
    expect(visible()).toEqual([]);
    turns.turn();
    expect(await Promise.all(results)).toEqual(['+491', '+492', '+493']);
    expect(seen.size).toBe(1);
    // Durable (committed) by the time the callers resume: another connection sees them.
    expect(visible()).toEqual(['+491', '+492', '+493']);
  });

  it('a failing item rejects alone; the others of its batch are committed', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer });
    const first = commit.run(insertSuppression('+491'));
    // The same primary key twice: the second insert of this item fails after the first wrote.
    const broken = commit.run(async (trx) => {
      await insertSuppression('+499')(trx);
      await insertSuppression('+499')(trx);
    });
    const third = commit.run(insertSuppression('+493'));
    turns.turn();
    await expect(first).resolves.toBe('+491');
    await expect(broken).rejects.toThrow(/UNIQUE/);
    await expect(third).resolves.toBe('+493');
    // Nothing of the failed item remains, not even its first write.
    expect(visible()).toEqual(['+491', '+493']);
  });

  it('when the COMMIT fails, every caller of the batch gets the error and nothing is written', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer });
    const first = commit.run(insertSuppression('+491'));
    // Foreign keys checked at COMMIT: this item itself succeeds, the commit fails.
    const deferred = commit.run(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await trx.insertInto('lead_contacts').values({ lead_id: 999_999, position: 0, phone_number: '+499' }).execute();
    });
    const third = commit.run(insertSuppression('+493'));
    turns.turn();
    for (const p of [first, deferred, third]) await expect(p).rejects.toThrow(/FOREIGN KEY/);
    expect(visible()).toEqual([]);
  });

  it('durableApart: the durable work of a turn is committed first, in a transaction of its own', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer, durableApart: true });
    const order: string[] = [];
    const trxOf = new Map<string, Transaction<Database>>();
    const work = (phone: string) => async (trx: Transaction<Database>) => {
      order.push(phone);
      trxOf.set(phone, trx);
      return insertSuppression(phone)(trx);
    };
    const results = [commit.run(work('+491')), commit.run(work('+492'), { durable: true }), commit.run(work('+493')), commit.run(work('+494'), { durable: true })];
    await turnUntilDone(turns, Promise.all(results));
    expect(await Promise.all(results)).toEqual(['+491', '+492', '+493', '+494']);
    // The claims (durable) together, before the rest, which shares the next transaction.
    expect(order).toEqual(['+492', '+494', '+491', '+493']);
    expect(trxOf.get('+492')).toBe(trxOf.get('+494'));
    expect(trxOf.get('+491')).toBe(trxOf.get('+493'));
    expect(trxOf.get('+491')).not.toBe(trxOf.get('+492'));
    expect(visible()).toEqual(['+491', '+492', '+493', '+494']);
  });

  it('background work goes after the rest, at most backgroundBatch of it per batch, and is never starved', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer, maxBatch: 4, backgroundBatch: 2 });
    const batches: string[][] = [];
    let last: Transaction<Database> | null = null;
    const work = (phone: string) => async (trx: Transaction<Database>) => {
      if (trx !== last) batches.push([]);
      last = trx;
      batches.at(-1)!.push(phone);
      return insertSuppression(phone)(trx);
    };
    // A listing's five observations queued first, then a turn's webhooks and claims.
    const background = ['+4901', '+4902', '+4903', '+4904', '+4905'].map((p) => commit.run(work(p), { background: true }));
    const urgent = ['+4911', '+4912', '+4913', '+4914', '+4915'].map((p) => commit.run(work(p)));
    await turnUntilDone(turns, Promise.all([...background, ...urgent]));
    // Each batch: the urgent work first, in its order, with two of the backlog kept in it.
    expect(batches).toEqual([
      ['+4911', '+4912', '+4901', '+4902'],
      ['+4913', '+4914', '+4903', '+4904'],
      ['+4915', '+4905'],
    ]);
    expect(visible()).toHaveLength(10);
  });

  it('splits a long queue into batches of at most maxBatch, all committed', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer, maxBatch: 2 });
    const trxs: Transaction<Database>[] = [];
    const results = ['+491', '+492', '+493', '+494', '+495'].map((p) =>
      commit.run(async (trx) => {
        trxs.push(trx);
        return insertSuppression(p)(trx);
      }),
    );
    await turnUntilDone(turns, Promise.all(results));
    expect(await Promise.all(results)).toHaveLength(5);
    expect(new Set(trxs).size).toBe(3);
    expect(visible()).toHaveLength(5);
  });

  it('gives the event loop a turn between two batches, so a backlog never holds the thread for all its batches at once', async () => {
    // On SQLite a batch never leaves the thread (a synchronous driver's promises settle as
    // microtasks): without a turn between them, a backlog's batches ran as one stretch, and
    // webhooks, the service's answers and API requests waited for all of them.
    const commit = createGroupCommit(handle.db, { maxBatch: 2 });
    const order: string[] = [];
    const results = ['+491', '+492', '+493', '+494'].map((p) =>
      commit.run(async (trx) => {
        order.push(p);
        return insertSuppression(p)(trx);
      }),
    );
    // An I/O callback of the same turn as the flush: it must run before the second batch.
    setImmediate(() => order.push('io'));
    await Promise.all(results);
    expect(order).toEqual(['+491', '+492', 'io', '+493', '+494']);
    expect(visible()).toHaveLength(4);
  });

  it('work queued in several turns while a batch is in flight waits for its commit, then shares ONE next transaction', async () => {
    const turns = manualTurns();
    const commit = createGroupCommit(handle.db, { defer: turns.defer });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = commit.run(async (trx) => {
      started();
      await held;
      return insertSuppression('+490')(trx);
    });
    turns.turn();
    await running;
    // Three turns while the first batch waits: none of them may start a transaction of its own.
    const trxs: Transaction<Database>[] = [];
    const later = ['+491', '+492', '+493'].map((p) => {
      const result = commit.run(async (trx) => {
        trxs.push(trx);
        return insertSuppression(p)(trx);
      });
      turns.turn();
      return result;
    });
    expect(turns.pending()).toBe(0);
    release();
    expect(await first).toBe('+490');
    // The next batch starts on a turn of its own (see the test above).
    await turnUntilDone(turns, Promise.all(later));
    expect(await Promise.all(later)).toEqual(['+491', '+492', '+493']);
    expect(new Set(trxs).size).toBe(1);
    expect(visible()).toEqual(['+490', '+491', '+492', '+493']);
  });

  it('with the default deferral, work from separate turns still completes', async () => {
    const commit = createGroupCommit(handle.db);
    const a = await commit.run(insertSuppression('+491'));
    const b = await commit.run(insertSuppression('+492'));
    expect([a, b]).toEqual(['+491', '+492']);
    expect(visible()).toEqual(['+491', '+492']);
  });
});

// Deferred writes on PostgreSQL (src/store/pg-pipeline.ts), on a real server (the PostgreSQL
// project only: test/suites/files.ts). A write marked deferred inside a transaction goes with
// the next awaited statement or the COMMIT, in one exchange; reads see it; its failure
// surfaces there, marked, and nothing of the transaction is committed; a group commit
// still gives the error to the item whose write it was.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { deferredWrite, isDeferredWriteError } from '../../src/store/pg-pipeline.js';
import type { Database } from '../../src/store/types.js';
import { openPostgresSessions } from '../helpers/test-store.js';

let store: DatabaseHandle;
/** A second connection, to see only what was committed. */
let other: DatabaseHandle;
let close: () => Promise<void>;
/** The number of statements of each exchange with the server, in order. */
let exchanges: number[];

beforeEach(async () => {
  exchanges = [];
  const sessions = await openPostgresSessions(2, { observeExchanges: (n) => exchanges.push(n) });
  [store, other] = sessions.stores as [DatabaseHandle, DatabaseHandle];
  close = sessions.close;
  await sql`create table items (id int primary key, n int not null check (n >= 0))`.execute(store.db);
  exchanges.length = 0;
});

afterEach(async () => close());

const insert = (db: Kysely<Database>, id: number, n: number): Promise<unknown> =>
  db.executeQuery(deferredWrite(db, CompiledQuery.raw('insert into items (id, n) values ($1, $2)', [id, n])));

/** The error a transaction of `work` failed with (undefined when it committed). */
const failureOf = (work: (trx: Kysely<Database>) => Promise<void>): Promise<unknown> =>
  store.db.transaction().execute(work).then(
    () => undefined,
    (err: unknown) => err,
  );

const committed = async (): Promise<number[]> =>
  (await sql<{ id: number }>`select id from items order by id`.execute(other.db)).rows.map((r) => Number(r.id));

describe('deferred writes on PostgreSQL', () => {
  it('go with the next awaited statement, which sees them, and with the COMMIT', async () => {
    const seen = await store.db.transaction().execute(async (trx) => {
      await insert(trx, 1, 1);
      await insert(trx, 2, 2);
      // Nothing has left yet: BEGIN and both writes wait for a statement that is awaited.
      expect(exchanges).toEqual([]);
      const count = await sql<{ c: number }>`select count(*)::int as c from items`.execute(trx);
      await insert(trx, 3, 3);
      return count.rows[0]!.c;
    });
    expect(seen).toBe(2);
    // BEGIN + two writes + the read in one exchange; the third write with the COMMIT.
    expect(exchanges).toEqual([4, 2]);
    expect(await committed()).toEqual([1, 2, 3]);
  });

  it('make a transaction of writes alone one exchange', async () => {
    await store.db.transaction().execute(async (trx) => {
      for (let id = 1; id <= 5; id++) await insert(trx, id, id);
    });
    expect(exchanges).toEqual([7]);
    expect(await committed()).toEqual([1, 2, 3, 4, 5]);
  });

  it('run at once outside a transaction', async () => {
    await insert(store.db, 7, 7);
    expect(exchanges).toEqual([1]);
    expect(await committed()).toEqual([7]);
  });

  it('that fail surface at the next statement, marked, and nothing of the transaction is committed', async () => {
    const caught = await failureOf(async (trx) => {
      await insert(trx, 1, 1);
      await insert(trx, 2, -1); // violates the check
      await sql`select 1`.execute(trx);
    });
    expect(String(caught)).toMatch(/check constraint/);
    expect(isDeferredWriteError(caught)).toBe(true);
    expect(await committed()).toEqual([]);
    // The connection is usable again.
    await insert(store.db, 3, 3);
    expect(await committed()).toEqual([3]);
  });

  it('that fail with the COMMIT make the commit fail, and nothing is committed', async () => {
    const caught = await failureOf(async (trx) => {
      await insert(trx, 1, 1);
      await insert(trx, 1, 2); // duplicate key
    });
    expect(String(caught)).toMatch(/duplicate key/);
    expect(isDeferredWriteError(caught)).toBe(true);
    expect(await committed()).toEqual([]);
  });

  it('of a group commit: the item whose write failed gets the error, the others are committed', async () => {
    const commit = createGroupCommit(store.db);
    const outcomes = await Promise.allSettled([
      commit.run(async (trx) => {
        await insert(trx, 1, 1);
        return 'first';
      }),
      commit.run(async (trx) => {
        await insert(trx, 2, -2);
        return 'second';
      }),
      commit.run(async (trx) => {
        await insert(trx, 3, 3);
        await sql`select 1`.execute(trx);
        return 'third';
      }),
    ]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'first' });
    expect(outcomes[1]!.status).toBe('rejected');
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/check constraint/);
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: 'third' });
    expect(await committed()).toEqual([1, 3]);
  });
});

// Named prepared statements on PostgreSQL (src/store/pg-statement-names.ts), on a real server
// (the PostgreSQL project only: test/suites/files.ts). A `prepared` query is parsed once per
// connection under a name and only bound afterwards; after another connection changes the
// shape of a table it reads with `select *` (a migration during a rolling upgrade), the
// server refuses it once and the connection parses it afresh under a new name: a statement
// outside a transaction is sent again at once, and a group commit runs the refused batch
// again, without their callers seeing anything.
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { isStaleStatementError } from '../../src/store/pg-statement-names.js';
import { prepared } from '../../src/store/prepared.js';
import { openPostgresSessions } from '../helpers/test-store.js';

let store: DatabaseHandle;
/** Another connection: the instance that migrates. */
let other: DatabaseHandle;
let close: () => Promise<void>;

beforeEach(async () => {
  const sessions = await openPostgresSessions(2);
  [store, other] = sessions.stores as [DatabaseHandle, DatabaseHandle];
  close = sessions.close;
  await sql`create table items (id int primary key, n int not null)`.execute(other.db);
  await sql`insert into items values (1, 10), (2, 20)`.execute(other.db);
});

afterEach(async () => close());

// `items` is not one of the store's tables, hence the untyped handle.
const itemById = prepared((db, v: { id: number }) => (db as unknown as Kysely<any>).selectFrom('items').selectAll().where('id', '=', v.id));

/** The statements the store's one connection holds prepared on the server. */
const preparedOnServer = async (): Promise<{ name: string; statement: string }[]> =>
  (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by prepare_time`.execute(store.db)).rows;

describe('named statements on PostgreSQL', () => {
  it('parse a prepared query once per connection, under a name, and only bind it afterwards', async () => {
    expect(await itemById.rows(store.db, { id: 1 })).toEqual([{ id: 1, n: 10 }]);
    expect(await itemById.rows(store.db, { id: 2 })).toEqual([{ id: 2, n: 20 }]);
    await store.db.transaction().execute(async (trx) => {
      expect(await itemById.rows(trx, { id: 2 })).toEqual([{ id: 2, n: 20 }]);
    });
    const held = await preparedOnServer();
    // One statement, however often it ran; the text-only queries (the view's select) are not kept.
    expect(held).toHaveLength(1);
    expect(held[0]!.name).toMatch(/^campaignd_\d+$/);
    expect(held[0]!.statement).toContain('from "items"');
  });

  it('after another connection adds a column: read again at once outside a transaction, refused once inside one', async () => {
    await itemById.rows(store.db, { id: 1 });
    await sql`alter table items add column note text`.execute(other.db);
    // Alone, the refused statement is simply sent again, parsed afresh: its caller sees the new shape.
    expect(await itemById.rows(store.db, { id: 1 })).toEqual([{ id: 1, n: 10, note: null }]);
    expect(await preparedOnServer()).toHaveLength(2);

    await sql`alter table items add column tag text`.execute(other.db);
    // In a transaction the refusal aborted it: its caller gets the error, the next one runs.
    const inTransaction = (): Promise<unknown> => store.db.transaction().execute((trx) => itemById.rows(trx, { id: 1 }));
    const refused = await inTransaction().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isStaleStatementError(refused)).toBe(true);
    expect(await inTransaction()).toEqual([{ id: 1, n: 10, note: null, tag: null }]);
  });

  it('a group commit runs a batch refused for that reason again, and its callers see the answer', async () => {
    await itemById.rows(store.db, { id: 2 });
    await sql`alter table items add column note text`.execute(other.db);
    const commit = createGroupCommit(store.db);
    const [a, b] = await Promise.all([
      commit.run(async (trx) => itemById.rows(trx, { id: 2 })),
      commit.run(async (trx) => {
        await sql`update items set n = n + 1 where id = 1`.execute(trx);
        return itemById.rows(trx, { id: 1 });
      }),
    ]);
    expect(a).toEqual([{ id: 2, n: 20, note: null }]);
    // The batch's first run was rolled back: the update is in once.
    expect(b).toEqual([{ id: 1, n: 11, note: null }]);
  });
});

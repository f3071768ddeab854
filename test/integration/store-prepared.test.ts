// Prepared queries (src/store/prepared.ts) on real SQLite: built once, each run binds its
// own values in the right places, constants of the query stay, and it works the same
// through the database and inside a transaction.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { prepared } from '../../src/store/prepared.js';

let handle: DatabaseHandle;
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  await handle.db
    .insertInto('suppressions')
    .values([
      { phone_number: '+491', source: 'a', added_at: 10 },
      { phone_number: '+492', source: 'b', added_at: 20 },
      { phone_number: '+493', source: 'a', added_at: 30 },
    ])
    .execute();
});
afterEach(async () => handle.close());

describe('prepared queries', () => {
  it('binds each run its own values, in the order the SQL needs them, around constants', async () => {
    let builds = 0;
    // Values in SET and WHERE, in an order unlike the declaration, and a constant ('c').
    const move = prepared((db, v: { to: number; phone: string; source: string }) => {
      builds++;
      return db.updateTable('suppressions').set({ source: 'c', added_at: v.to }).where('source', '=', v.source).where('phone_number', '=', v.phone);
    });
    expect(await move.affected(handle.db, { phone: '+491', source: 'a', to: 99 })).toBe(1);
    expect(await move.affected(handle.db, { phone: '+492', source: 'a', to: 98 })).toBe(0); // '+492' is source b
    await handle.db.transaction().execute(async (trx) => {
      expect(await move.affected(trx, { phone: '+493', source: 'a', to: 97 })).toBe(1);
    });
    const rows = await handle.db.selectFrom('suppressions').selectAll().orderBy('phone_number').execute();
    expect(rows).toEqual([
      { phone_number: '+491', source: 'c', added_at: 99 },
      { phone_number: '+492', source: 'b', added_at: 20 },
      { phone_number: '+493', source: 'c', added_at: 97 },
    ]);
    expect(builds).toBe(1);
  });

  it('returns rows of a select with a bound LIMIT, and of a RETURNING', async () => {
    const since = prepared((db, v: { after: number; limit: number }) =>
      db.selectFrom('suppressions').select(['phone_number', 'added_at']).where('added_at', '>', v.after).orderBy('added_at').limit(v.limit),
    );
    expect(await since.rows(handle.db, { after: 10, limit: 1 })).toEqual([{ phone_number: '+492', added_at: 20 }]);
    expect(await since.rows(handle.db, { after: 0, limit: 5 })).toHaveLength(3);
    const add = prepared((db, v: { phone: string }) => db.insertInto('suppressions').values({ phone_number: v.phone, source: 'new', added_at: 1 }).returningAll());
    expect(await add.rows(handle.db, { phone: '+494' })).toEqual([{ phone_number: '+494', source: 'new', added_at: 1 }]);
  });

  it('refuses a run with a value missing, rather than binding NULL', async () => {
    const byPhone = prepared((db, v: { phone: string }) => db.selectFrom('suppressions').selectAll().where('phone_number', '=', v.phone));
    await expect(byPhone.rows(handle.db, {} as { phone: string })).rejects.toThrow(/no value for "phone"/);
  });
});

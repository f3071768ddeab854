// Group commit on PostgreSQL (src/store/group-commit.ts), two committers on two connections as
// two instances: their batches lock the same two rows in opposite orders, PostgreSQL breaks the
// deadlock by rolling one back, and that batch runs again (its work is reads and conditional
// writes only), so every caller gets its result and both batches' writes are there.
import { sql, type Transaction } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Database } from '../../src/store/types.js';
import { createTestDatabase } from '../helpers/test-store.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of closers.splice(0).reverse()) await fn();
});

describe('group commit on PostgreSQL', () => {
  it('runs a batch rolled back by a deadlock again, so neither caller sees it', async () => {
    const database = await createTestDatabase();
    closers.push(() => database.drop());
    const a: DatabaseHandle = openPostgres(database.url);
    const b: DatabaseHandle = openPostgres(database.url);
    closers.push(() => a.close(), () => b.close());
    await migrateToLatest(a.db, { clock: { now: () => 0 } });
    await sql`INSERT INTO suppressions (phone_number, source, added_at) VALUES ('+15550000001', 'x', 0), ('+15550000002', 'x', 0)`.execute(a.db);

    // Each batch updates its first row, waits until the other batch holds its own, then
    // updates the other's row: a lock cycle on the first run, whichever order they start in.
    let heldA!: () => void;
    let heldB!: () => void;
    const aHolds = new Promise<void>((r) => (heldA = r));
    const bHolds = new Promise<void>((r) => (heldB = r));
    const touch = (phone: string, source: string) => sql`UPDATE suppressions SET source = source || ${source} WHERE phone_number = ${phone}`;
    const work = (first: string, second: string, tag: string, held: () => void, other: Promise<void>) => async (trx: Transaction<Database>) => {
      await touch(first, tag).execute(trx);
      held();
      await other;
      await touch(second, tag).execute(trx);
      return tag;
    };
    const ca = createGroupCommit(a.db);
    const cb = createGroupCommit(b.db);
    const results = await Promise.allSettled([
      ca.run(work('+15550000001', '+15550000002', 'A', heldA, bHolds)),
      cb.run(work('+15550000002', '+15550000001', 'B', heldB, aHolds)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 'A' },
      { status: 'fulfilled', value: 'B' },
    ]);
    // Both batches' writes, each once: the rolled-back run left nothing.
    const rows = (await sql<{ source: string }>`SELECT source FROM suppressions ORDER BY phone_number`.execute(a.db)).rows.map((r) => r.source.split('').sort().join(''));
    expect(rows).toEqual(['ABx', 'ABx']);
  });
});

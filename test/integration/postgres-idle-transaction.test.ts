// A transaction of ours left idle past idle_in_transaction_session_timeout is ended by the
// server (src/store/postgres.ts): the locks of a process frozen inside a transaction do not
// outlive its lease (test/e2e/ha-frozen-transaction.test.ts shows the takeover). Here, on a
// real server: the setting reaches the session, the ended session's next statement fails
// with an error (it does not end the process through an unheard 'error' event), the rows
// it locked are free for another session, and the store works again on a new connection.
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { IDLE_IN_TRANSACTION_MS, openPostgres } from '../../src/store/postgres.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';

let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await drop?.();
  drop = null;
});

describe('a transaction left idle on PostgreSQL', () => {
  it('is rolled back by the server after idleInTransactionMs, freeing its locks, and the store goes on', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const idle = openPostgres(database.url, { idleInTransactionMs: 400 });
    const plain = openPostgres(database.url);
    try {
      await sql`create table t (id int primary key, v int)`.execute(idle.db);
      await sql`insert into t values (1, 0)`.execute(idle.db);
      expect((await sql<{ v: string }>`select current_setting('idle_in_transaction_session_timeout') as v`.execute(plain.db)).rows[0]!.v).toBe(`${IDLE_IN_TRANSACTION_MS / 1000}s`);
      expect((await sql<{ v: string }>`select current_setting('idle_in_transaction_session_timeout') as v`.execute(idle.db)).rows[0]!.v).toBe('400ms');

      const failed = idle.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        await sql`update t set v = 1 where id = 1`.execute(trx);
        // As frozen: nothing more is sent until the server has ended the session.
        await waitUntil(async () => (await admin.query('select 1 from pg_stat_activity where pid = $1', [rows[0]!.pid])).rows.length === 0, {
          timeoutMs: 10_000,
          intervalMs: 50,
          message: 'the idle session ended by the server',
        });
        await sql`update t set v = 2 where id = 1`.execute(trx);
      });
      await expect(failed).rejects.toThrow();
      // The row is free at once, and its update was rolled back.
      await admin.query("set lock_timeout = '1s'");
      await admin.query('update t set v = 3 where id = 1');
      expect((await admin.query('select v from t where id = 1')).rows[0].v).toBe(3);
      // The pool dropped the ended connection: the next statement runs on a new one.
      expect((await sql<{ v: number }>`select v from t where id = 1`.execute(idle.db)).rows[0]!.v).toBe(3);
    } finally {
      await admin.end();
      await idle.close();
      await plain.close();
    }
  });
});

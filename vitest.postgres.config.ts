import { defineConfig } from 'vitest/config';

// The store's tests again, on PostgreSQL: the same files as on SQLite, each opening its
// store through test/helpers/test-store.ts, which reads the dialect from this env.
// One embedded PostgreSQL server per run (postgres-server.ts); one database per store.
// A server that cannot start fails the run: it never skips.
export default defineConfig({
  test: {
    include: [
      'test/integration/store-*.test.ts',
      'test/integration/results-*.test.ts',
      'test/integration/who-*.test.ts',
      'test/integration/hooks-outbox.test.ts',
      'test/integration/engine-*.test.ts',
      'test/integration/postgres-*.test.ts',
      'test/e2e/ha-*.test.ts',
      'test/e2e/leads-import-store.test.ts',
    ],
    // SQLite's own files, pragmas and locks: nothing of them exists on PostgreSQL.
    exclude: [
      'test/integration/store-database.test.ts', // WAL, pragmas, file modes, the readonly file
      'test/integration/store-durable.test.ts', // synchronous=FULL around the intent commit
      'test/integration/engine-store-errors.test.ts', // a second SQLite connection holding the write lock
      'test/integration/results-forget.test.ts', // VACUUM and the bytes left in the file and its WAL
      'test/integration/store-group-commit.test.ts', // reads through a second, read-only SQLite connection
    ],
    env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
  },
});

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
    ],
    env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
  },
});

import { defineConfig } from 'vitest/config';

// The stress files that run on both dialects, on PostgreSQL (after vitest.stress.config.ts
// ran them on SQLite): one embedded server for the run (postgres-server.ts), a database per
// stack (test-store.ts reads CAMPAIGND_TEST_DIALECT). The others drive daemon processes on
// their SQLite file and stay SQLite-only.
export default defineConfig({
  test: {
    include: ['test/stress/who-year.test.ts'],
    env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
    maxWorkers: 1,
    fileParallelism: false,
  },
});

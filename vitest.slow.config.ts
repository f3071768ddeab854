import { defineConfig } from 'vitest/config';
import { SLOW_POSTGRES, SLOW_SQLITE } from './test/suites/files.js';

// `npm run test:slow`: the long profiles (real daemon and simulator processes; many kills,
// the 10-minute soak, whole years of calling rules on both databases, the failover chaos
// test, the packed install). Minutes each, not seconds; the same checks and durations as
// ever, moved out of `npm test` so that one runs while a person works.
//
// Two files at a time: each runs a daemon and a service of its own, and most of their time is
// real time (the soak's ten minutes, restarts after kills, backstop waits), not CPU.
export default defineConfig({
  test: {
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'slow-sqlite',
          include: SLOW_SQLITE,
          globalSetup: ['test/helpers/build.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'slow-postgres',
          include: SLOW_POSTGRES,
          env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
          globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
        },
      },
    ],
  },
});

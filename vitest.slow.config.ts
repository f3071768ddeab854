import { defineConfig } from 'vitest/config';
import { SLOW_POSTGRES, SLOW_SQLITE, SLOW_SQLITE_BUSY } from './test/suites/files.js';

// `npm run test:slow`: the long profiles (real daemon and simulator processes; many kills,
// the 10-minute soak, whole years of calling rules on both databases, the failover chaos
// test, the packed install). Minutes each, not seconds; the same checks and durations as
// ever, moved out of `npm test` so that one runs while a person works.
//
// Two files at a time, in two rounds (sequence.groupOrder): first the PostgreSQL files beside
// the SQLite ones that mostly wait, then the SQLite ones that keep a core busy. Each file runs
// a daemon and a service of its own; the two years of calling rules are CPU-bound and would
// halve each other's speed if they met.
const round = (name: string, groupOrder: number, include: string[], extra: { env?: Record<string, string>; globalSetup: string[] }) => ({
  extends: true as const,
  test: { name, include, sequence: { groupOrder }, ...extra },
});

export default defineConfig({
  test: {
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      round('slow-postgres', 1, SLOW_POSTGRES, {
        env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
        globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
      }),
      round('slow-sqlite', 1, SLOW_SQLITE, { globalSetup: ['test/helpers/build.ts'] }),
      round('slow-sqlite-busy', 2, SLOW_SQLITE_BUSY, { globalSetup: ['test/helpers/build.ts'] }),
    ],
  },
});

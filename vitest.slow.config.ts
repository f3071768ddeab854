import { defineConfig } from 'vitest/config';
import { SLOW_PACK, SLOW_POSTGRES_REST, SLOW_POSTGRES_YEAR, SLOW_SQLITE_BUSY, SLOW_SQLITE_WAITING } from './test/suites/files.js';

// `npm run test:slow`: the long profiles (real daemon and simulator processes; many kills,
// the 10-minute soak, whole years of calling rules on both databases, the failover chaos
// test, the packed install). Minutes each, not seconds; the same checks and durations as
// ever, moved out of `npm test` so that one runs while a person works.
//
// Two files at a time, in three rounds (sequence.groupOrder), so that what keeps a core busy
// never meets what a busy neighbour makes fail:
//  1. the year of calling rules on PostgreSQL (×15,000: a second of real time is four simulated
//     hours) beside the two SQLite files that mostly wait, all three at once (maxWorkers 3: the
//     waiting files are kills, restarts and backstop waits, not CPU). At ×30,000 the three at
//     once made the year fail in CI and once in three runs here (claims outlived their real
//     100 ms until a whole open day passed without a call; 43–250 stale claims); at ×15,000
//     the same round withdrew none and took 455 s, against 595 s two at a time;
//  2. the other PostgreSQL files (callbacks oracle, failover and accounts chaos, an instance
//     frozen inside a transaction) and the packed install;
//  3. the SQLite files that keep a core busy (a year of calling rules, a year of windows, the
//     soak, the callbacks oracle). The two years of calling rules would halve each other's
//     speed if they met.
// Each file runs a daemon and a service of its own; each PostgreSQL project its own server.
const round = (name: string, groupOrder: number, include: string[], extra: { env?: Record<string, string>; globalSetup: string[]; maxWorkers?: number }) => ({
  extends: true as const,
  test: { name, include, sequence: { groupOrder }, ...extra },
});

const BUILD = ['test/helpers/build.ts'];
const POSTGRES_SETUP = [...BUILD, 'test/helpers/postgres-server.ts'];
const POSTGRES_ENV = { CAMPAIGND_TEST_DIALECT: 'postgres' };

export default defineConfig({
  test: {
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      round('slow-postgres-year', 1, SLOW_POSTGRES_YEAR, { env: POSTGRES_ENV, globalSetup: POSTGRES_SETUP, maxWorkers: 3 }),
      round('slow-sqlite', 1, SLOW_SQLITE_WAITING, { globalSetup: BUILD, maxWorkers: 3 }),
      round('slow-postgres', 2, SLOW_POSTGRES_REST, { env: POSTGRES_ENV, globalSetup: POSTGRES_SETUP }),
      round('slow-pack', 2, SLOW_PACK, { globalSetup: BUILD }),
      round('slow-sqlite-busy', 3, SLOW_SQLITE_BUSY, { globalSetup: BUILD }),
    ],
  },
});

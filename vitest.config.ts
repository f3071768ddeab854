import { defineConfig } from 'vitest/config';
import { POSTGRES, POSTGRES_ONLY, SLOW_POSTGRES, SLOW_SQLITE, SLOW_SQLITE_BUSY, SQLITE_ONLY } from './test/suites/files.js';

// `npm test`: every test file that takes seconds, on SQLite and (the store, results, rules and
// engine files) again on PostgreSQL, in one run. The long profiles are in
// vitest.slow.config.ts (`npm run test:slow`); test/suites/files.ts says which file is where.
//
// Most files wait on something real (a child process, a socket, a scaled clock), so more
// files run at once than the machine has cores: vitest's default on 2 cores is one. Four at
// once on 2 cores: vitest's own 558–585 s against 622–633 s with three (2026-11-29, two runs
// each, all passed; the machine was idle 23 % of the run with three, 14 % with four). The
// files that spawn many short CLI processes take 2–3× as long beside each other, the
// minute-long daemon runs that wait on real time not much longer.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 4,
    // A worker keeps its modules from one file to the next: importing the sources afresh
    // for each of some 300 files took a third of the run. The files hold no module state
    // of their own between them (each opens its own store, stack and servers, and spies
    // are restored after each test), so isolation bought nothing but the imports.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [...SLOW_SQLITE, ...SLOW_SQLITE_BUSY, ...POSTGRES_ONLY],
          // The tests spawn bin/campaignd.js, which runs dist/: rebuilt first when a source is newer.
          globalSetup: ['test/helpers/build.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES,
          exclude: [...SQLITE_ONLY, ...SLOW_POSTGRES],
          // The same files, each opening its store through test/helpers/test-store.ts, which reads
          // the dialect from this env. One embedded PostgreSQL server for the run
          // (postgres-server.ts), one database per store; a server that cannot start fails the run.
          env: { CAMPAIGND_TEST_DIALECT: 'postgres' },
          globalSetup: ['test/helpers/build.ts', 'test/helpers/postgres-server.ts'],
        },
      },
    ],
  },
});

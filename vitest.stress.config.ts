import { defineConfig } from 'vitest/config';

// `npm run test:stress`: the long profiles of the end-to-end harness (real daemon and
// simulator processes; many kills, more leads, several seeds). Minutes, not seconds.
export default defineConfig({
  test: {
    include: ['test/stress/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The tests spawn bin/campaignd.js, which runs dist/: rebuilt first when a source is newer.
    globalSetup: ['test/helpers/build.ts'],
    // One scenario at a time: each already runs a daemon and a simulator on a 2-core machine.
    maxWorkers: 1,
    fileParallelism: false,
  },
});

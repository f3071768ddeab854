import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // postgres-*: PostgreSQL only, in vitest.postgres.config.ts (which starts the server they need).
    exclude: ['test/stress/**', 'test/integration/postgres-*.test.ts', 'test/e2e/ha-*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The tests spawn bin/campaignd.js, which runs dist/: rebuilt first when a source is newer.
    globalSetup: ['test/helpers/build.ts'],
  },
});

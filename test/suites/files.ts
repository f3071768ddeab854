// Which test files run where: the one list both vitest configs read, so a file is in exactly
// one of `npm test` (minutes: what a person runs while working) and `npm run test:slow`
// (the long profiles: stress, chaos, the soak, the years of calling rules, the packed install).

/**
 * The slow runs on SQLite that mostly wait (kills and restarts, backstop waits): they run
 * beside the year of calling rules on PostgreSQL.
 */
export const SLOW_SQLITE_WAITING = ['test/stress/crash-many.test.ts', 'test/stress/fault-waves.test.ts'];

/** npm pack, then a fresh install of the tarball that compiles better-sqlite3 (a core busy for a minute and a half). */
export const SLOW_PACK = ['test/e2e/pack.test.ts'];

/** The slow runs on SQLite that are neither years nor the soak (left out of `npm test`). */
export const SLOW_SQLITE = [...SLOW_SQLITE_WAITING, ...SLOW_PACK];

/**
 * The slow runs on SQLite that keep a core busy for minutes (a year of calling rules, a year of
 * windows, the soak's 10 minutes of dialing, ten days of callbacks): after the others, so that the two years of
 * calling rules (this one's and PostgreSQL's) never share the two cores.
 */
export const SLOW_SQLITE_BUSY = ['test/stress/who-year.test.ts', 'test/stress/time-year.test.ts', 'test/stress/soak.test.ts', 'test/stress/callbacks-oracle.test.ts'];

/**
 * The year of calling rules on PostgreSQL, in a round of its own beside only the SQLite files
 * that mostly wait (SLOW_SQLITE_WAITING): at ×30,000 (a second of real time eight simulated
 * hours), beside the callbacks oracle, a chaos run or both waiting files at once, the engine
 * fell behind long enough for whole open stretches to pass without a call (CI, four times).
 * It now runs at ×15,000 (who-year.test.ts), beside both waiting files.
 */
export const SLOW_POSTGRES_YEAR = ['test/stress/who-year.test.ts'];

/**
 * The other slow runs on PostgreSQL: ten days of callbacks judged by their oracle, the failover
 * and accounts chaos tests (kills, a freeze past the lease), and an instance frozen inside a
 * transaction (two minutes: the campaigns are run to their end after the wake).
 */
export const SLOW_POSTGRES_REST = ['test/stress/callbacks-oracle.test.ts', 'test/e2e/ha-failover.test.ts', 'test/e2e/ha-accounts-chaos.test.ts', 'test/e2e/ha-frozen-transaction.test.ts'];

/** Every slow run on PostgreSQL (left out of `npm test`'s PostgreSQL project). */
export const SLOW_POSTGRES = [...SLOW_POSTGRES_YEAR, ...SLOW_POSTGRES_REST];

/** The store, results, who-may-be-called and engine tests, run again on PostgreSQL. */
export const POSTGRES = [
  'test/integration/store-*.test.ts',
  'test/integration/results-*.test.ts',
  'test/integration/who-*.test.ts',
  'test/integration/hooks-outbox.test.ts',
  'test/integration/engine-*.test.ts',
  'test/integration/api-*.test.ts',
  // Two instances on one database behind the API (PostgreSQL only: POSTGRES_ONLY).
  'test/e2e/ha-api.test.ts',
  // Several active instances sharing accounts, one killed (PostgreSQL only: POSTGRES_ONLY).
  'test/e2e/ha-accounts.test.ts',
  'test/integration/postgres-*.test.ts',
  // The daemon on PostgreSQL alone (POSTGRES_ONLY).
  'test/e2e/postgres-*.test.ts',
  'test/e2e/leads-import-store.test.ts',
  'test/e2e/api-keys.test.ts',
];

/** Files about SQLite's own file, pragmas and locks: nothing of them exists on PostgreSQL. */
export const SQLITE_ONLY = [
  'test/integration/store-database.test.ts', // WAL, pragmas, file modes, the readonly file
  'test/integration/store-durable.test.ts', // synchronous=FULL around the intent commit
  'test/integration/engine-store-errors.test.ts', // a second SQLite connection holding the write lock
  'test/integration/results-forget.test.ts', // VACUUM and the bytes left in the file and its WAL
  'test/integration/store-group-commit.test.ts', // reads through a second, read-only SQLite connection
  'test/integration/api-read-connection.test.ts', // the API's read-only SQLite connection beside the writing one
];

/** PostgreSQL-only files: they need the run's server. */
export const POSTGRES_ONLY = ['test/integration/postgres-*.test.ts', 'test/e2e/ha-*.test.ts', 'test/e2e/postgres-*.test.ts'];

// The store a test runs on: SQLite in memory on the default run, a fresh PostgreSQL
// database on the PostgreSQL run (the postgres project in vitest.config.ts sets CAMPAIGND_TEST_DIALECT and
// its globalSetup, postgres-server.ts, provides the server's URL). The same test then
// proves the same behaviour on both dialects.
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import type { StoreDialect } from '../../src/store/dialect.js';
import { openPostgres, type OpenPostgresOptions } from '../../src/store/postgres.js';

/** The dialect of this test run; read here only, so tests never branch on the environment. */
export const testDialect: StoreDialect = process.env.CAMPAIGND_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

let created = 0;

/** The PostgreSQL server of this run, or a loud failure when the run has none. */
export function postgresServerUrl(): string {
  const url = inject('postgresUrl');
  if (!url) throw new Error('the PostgreSQL test run has no server: test/helpers/postgres-server.ts must be its globalSetup');
  return url;
}

/** Runs `fn` on a connection to the server's maintenance database. */
async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresServerUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new, empty PostgreSQL database on the test server; its URL and how to drop it. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * A new PostgreSQL database with `count` stores open on it, each on its own connection, as
 * separate instances or pools would be (`first`: options of the first); close() closes them
 * all and drops the database.
 */
export async function openPostgresSessions(count: number, first: OpenPostgresOptions = {}): Promise<{ stores: DatabaseHandle[]; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const stores = Array.from({ length: count }, (_, i) => openPostgres(database.url, i === 0 ? first : {}));
  return {
    stores,
    async close() {
      for (const store of stores) await store.close();
      await database.drop();
    },
  };
}

export interface TestStoreOptions {
  /** PostgreSQL pool size (default 1, as the daemon's). */
  maxConnections?: number;
}

/**
 * An empty store for one test (not migrated): SQLite ':memory:', or a database of its own
 * on the PostgreSQL run. close() also drops the PostgreSQL database.
 */
export async function openTestStore(opts: TestStoreOptions = {}): Promise<DatabaseHandle> {
  if (testDialect === 'sqlite') return openDatabase(':memory:');
  const database = await createTestDatabase();
  const handle = openPostgres(database.url, { maxConnections: opts.maxConnections });
  return {
    ...handle,
    async close() {
      await handle.close();
      await database.drop();
    },
  };
}

/** A database for a command under test: what the config names, the env it needs, how to open and drop it. */
export interface TestDatabaseTarget {
  /** For the config's `database`: a file in `dir`, or a PostgreSQL URL WITHOUT its password. */
  database: string;
  /** The commands' environment: PGPASSWORD on the PostgreSQL run, as an operator sets it. */
  env: Record<string, string>;
  open(opts?: { readonly?: boolean }): Promise<DatabaseHandle>;
  drop(): Promise<void>;
}

/** A fresh database for CLI tests: a file in `dir`, or a new PostgreSQL database. */
export async function testDatabaseTarget(dir: string): Promise<TestDatabaseTarget> {
  if (testDialect === 'sqlite') {
    const file = path.join(dir, 'campaignd.db');
    return { database: file, env: {}, open: async (opts) => openDatabase(file, opts), drop: async () => undefined };
  }
  const created = await createTestDatabase();
  const url = new URL(created.url);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const database = url.toString();
  return { database, env: { PGPASSWORD: password }, open: async (opts) => openPostgres(database, { ...opts, password }), drop: created.drop };
}

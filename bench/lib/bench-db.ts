// The database a benchmark runs on, chosen by `--dialect sqlite|postgres` (default sqlite):
// the same bench measures either, rather than a PostgreSQL copy of each. A SQLite target is
// a file in the bench's temp folder; a PostgreSQL target is a fresh database on the server
// `npm run bench` started (its URL in BENCH_POSTGRES_URL), or, for a bench run alone, on a
// throwaway embedded server started here. A server that cannot start fails the bench: a
// PostgreSQL figure silently measured on SQLite would be worse than none.
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { startPostgresServer } from '../../test/helpers/postgres-server.js';

export type BenchDialect = 'sqlite' | 'postgres';

/** The server URL (with its password) bench/index.ts hands to each PostgreSQL bench. */
export const POSTGRES_URL_ENV = 'BENCH_POSTGRES_URL';

/** The dialect named by `--dialect X` in argv; sqlite when absent. */
export function benchDialect(argv: readonly string[] = process.argv): BenchDialect {
  const i = argv.indexOf('--dialect');
  const value = i >= 0 ? argv[i + 1] : 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`--dialect must be sqlite or postgres, not ${String(value)}`);
  return value;
}

/** A label for output lines and notes. */
export function dialectLabel(dialect: BenchDialect): string {
  return dialect === 'postgres' ? 'PostgreSQL' : 'SQLite';
}

export interface BenchTarget {
  dialect: BenchDialect;
  /** For a config's `database` or CAMPAIGND_DATABASE: the file, or the URL WITHOUT its password. */
  database: string;
  /** What a campaignd process needs besides: PGPASSWORD on PostgreSQL, as an operator sets it. */
  env: Record<string, string>;
  /** The URL with its password (PostgreSQL only), for a raw pg client. */
  adminUrl?: string;
  /** Opens the store as the daemon would (PostgreSQL: pool of `maxConnections`, default 1). */
  open(opts?: { readonly?: boolean; maxConnections?: number }): Promise<DatabaseHandle>;
  /** Drops the PostgreSQL database (and stops a server started for this bench); a file is left to the caller's folder. */
  drop(): Promise<void>;
}

let ownServer: Promise<{ url: string; stop(): Promise<void> }> | null = null;
/** Targets on this process's own server not yet dropped: the last drop stops it. */
let ownUsers = 0;
let created = 0;

/** The server to create databases on: index.ts's, or one of this process's own. */
async function serverUrl(): Promise<{ url: string; release: () => Promise<void> }> {
  const shared = process.env[POSTGRES_URL_ENV];
  if (shared) return { url: shared, release: async () => undefined };
  ownServer ??= startPostgresServer({ fsync: true });
  ownUsers++;
  const server = await ownServer;
  return {
    url: server.url,
    async release() {
      if (--ownUsers > 0) return;
      ownServer = null;
      await server.stop();
    },
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty (unmigrated) database: `file` in a folder of the bench's, or a new PostgreSQL database. */
export async function benchTarget(dialect: BenchDialect, file: string): Promise<BenchTarget> {
  if (dialect === 'sqlite') {
    const resolved = path.resolve(file);
    return { dialect, database: resolved, env: {}, open: async (opts) => openDatabase(resolved, { readonly: opts?.readonly }), drop: async () => undefined };
  }
  const server = await serverUrl();
  const name = `bench_${process.pid}_${++created}`;
  await withClient(server.url, (c) => c.query(`CREATE DATABASE ${name}`));
  const admin = new URL(server.url);
  admin.pathname = `/${name}`;
  const password = decodeURIComponent(admin.password);
  const bare = new URL(admin);
  bare.password = '';
  const database = bare.toString();
  return {
    dialect,
    database,
    env: { PGPASSWORD: password },
    adminUrl: admin.toString(),
    open: async (opts) => openPostgres(database, { password, readonly: opts?.readonly, maxConnections: opts?.maxConnections }),
    async drop() {
      await withClient(server.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      await server.release();
    },
  };
}

/** Runs `fn` on a raw pg client of the target (bulk SQL, VACUUM); PostgreSQL targets only. */
export function withTargetClient<T>(target: BenchTarget, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  if (!target.adminUrl) throw new Error('withTargetClient: not a PostgreSQL target');
  return withClient(target.adminUrl, fn);
}

/** The real schema on an empty target, as the daemon's first start leaves it (before bulk SQL). */
export async function migrateTarget(target: BenchTarget, now: number): Promise<void> {
  const setup = await target.open();
  try {
    await migrateToLatest(setup.db, { clock: { now: () => now } });
  } finally {
    await setup.close();
  }
}

import { DatabaseMissingError, openDatabase, type DatabaseHandle } from './database.js';
import { isPostgresUrl, redactUrl } from './dialect.js';

// One way in for every command: the `database` setting names either a SQLite file or a
// PostgreSQL server (postgres://…). pg is loaded only when a URL asks for it, so the
// SQLite commands (status above all, issue 11) never pay for it.

export interface OpenStoreOptions {
  readonly?: boolean;
  /** SQLite's busy timeout / PostgreSQL's lock timeout, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** PostgreSQL password (PGPASSWORD or the config's database_password_file). */
  password?: string;
  /** PostgreSQL pool size (default 1: see postgres.ts). */
  maxConnections?: number;
}

export async function openStore(target: string, opts: OpenStoreOptions = {}): Promise<DatabaseHandle> {
  if (!isPostgresUrl(target)) return openDatabase(target, { readonly: opts.readonly, busyTimeoutMs: opts.busyTimeoutMs });
  const { openPostgres } = await import('./postgres.js');
  return openPostgres(target, { readonly: opts.readonly, password: opts.password, maxConnections: opts.maxConnections, lockTimeoutMs: opts.busyTimeoutMs });
}

/** The setting as it may be shown: a file as is, a URL without its password. */
export function describeTarget(target: string): string {
  return isPostgresUrl(target) ? redactUrl(target) : target;
}

/** PostgreSQL's "database does not exist" (3D000), the counterpart of DatabaseMissingError. */
export function isMissingDatabase(err: unknown): boolean {
  return err instanceof DatabaseMissingError || (err as { code?: string } | null)?.code === '3D000';
}

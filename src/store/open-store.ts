import { readFile } from 'node:fs/promises';
import { DatabaseMissingError, openDatabase, type DatabaseHandle } from './database.js';
import { describeTarget, isPostgresUrl } from './database-url.js';

// One way in for every command: the `database` setting names either a SQLite file or a
// PostgreSQL server (postgres://…). pg is loaded only when a URL asks for it, so the
// SQLite commands (status above all, issue 11) never pay for it.

export interface OpenStoreOptions {
  readonly?: boolean;
  /** SQLite's busy timeout / PostgreSQL's lock timeout, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** PostgreSQL password (storePassword()); never part of the configured URL. */
  password?: string;
  /** PostgreSQL pool size (default 1: see postgres.ts). */
  maxConnections?: number;
  /** PostgreSQL: a transaction left idle this long is rolled back by the server (postgres.ts). */
  idleInTransactionMs?: number;
}

export async function openStore(target: string, opts: OpenStoreOptions = {}): Promise<DatabaseHandle> {
  if (!isPostgresUrl(target)) return openDatabase(target, { readonly: opts.readonly, busyTimeoutMs: opts.busyTimeoutMs });
  const { openPostgres } = await import('./postgres.js');
  return openPostgres(target, { readonly: opts.readonly, password: opts.password, maxConnections: opts.maxConnections, lockTimeoutMs: opts.busyTimeoutMs, idleInTransactionMs: opts.idleInTransactionMs });
}

/** Thrown when the password file cannot be read; names the file, never its content. */
export class PasswordFileError extends Error {
  constructor(readonly file: string, reason: string) {
    super(`cannot read database_password_file ${file}: ${reason}`);
    this.name = 'PasswordFileError';
  }
}

/**
 * The PostgreSQL password: $PGPASSWORD when set (the environment overrides the file, as
 * for every other setting), else the first line of the config's database_password_file.
 * Undefined for SQLite, or when neither is given (pg then tries ~/.pgpass and trust).
 */
export async function storePassword(target: string, env: Record<string, string | undefined>, passwordFile?: string): Promise<string | undefined> {
  if (!isPostgresUrl(target)) return undefined;
  if (env.PGPASSWORD) return env.PGPASSWORD;
  if (passwordFile === undefined) return undefined;
  try {
    return (await readFile(passwordFile, 'utf8')).split(/\r?\n/, 1)[0];
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new PasswordFileError(passwordFile, code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? err));
  }
}

export { describeTarget };

/** PostgreSQL's "database does not exist" (3D000), the counterpart of DatabaseMissingError. */
export function isMissingDatabase(err: unknown): boolean {
  return err instanceof DatabaseMissingError || (err as { code?: string } | null)?.code === '3D000';
}

/** The daemon config's database fields, as every command opens them. */
export interface DatabaseSetting {
  database: string;
  databasePasswordFile?: string;
}

/** Opens the configured store, with the PostgreSQL password from the environment or its file. */
export async function openConfiguredStore(setting: DatabaseSetting, env: Record<string, string | undefined>, opts: Omit<OpenStoreOptions, 'password'> = {}): Promise<DatabaseHandle> {
  const password = await storePassword(setting.database, env, setting.databasePasswordFile);
  return openStore(setting.database, { ...opts, ...(password !== undefined ? { password } : {}) });
}

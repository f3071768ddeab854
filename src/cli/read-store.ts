import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDaemonFile } from '../config/daemon.js';
import type { DatabaseHandle } from '../store/database.js';
import { describeTarget, isPostgresUrl } from '../store/database-url.js';
import { schemaStatus } from '../store/migrate.js';
import { isMissingDatabase, openConfiguredStore, PasswordFileError, type DatabaseSetting } from '../store/open-store.js';
import { resolveConfigPath } from './config-path.js';
import { CliError, EXIT, type CliIo } from './io.js';

// How read-only commands (status, explain) reach the store: the database named by the
// config (or $CAMPAIGND_DATABASE when the config cannot be read), opened read-only so
// that they work while the daemon writes and while it is down.

/**
 * The database the config names (a SQLite file or a PostgreSQL URL) and its password file.
 * Only the daemon file is read: the campaign files (and the holiday calendars, phone
 * metadata and schemas they need) would double the start-up time of `campaignd status`
 * for a field they do not hold (issue 11: status ≤ 200 ms).
 */
export async function databaseSetting(configFlag: string | undefined, io: CliIo): Promise<DatabaseSetting> {
  const file = path.resolve(io.cwd, resolveConfigPath(configFlag, io));
  const fromEnv = io.env.CAMPAIGND_DATABASE;
  const envSetting = (value: string): DatabaseSetting => ({ database: value === ':memory:' || isPostgresUrl(value) ? value : path.resolve(io.cwd, value) });
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (fromEnv) return envSetting(fromEnv);
    const code = (err as { code?: string }).code;
    const reason = code === 'ENOENT' ? 'no such file or folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : err instanceof Error ? err.message : String(err);
    throw new CliError(`${file}: cannot read the config file: ${reason} (pass --config FILE or set CAMPAIGND_CONFIG)`, EXIT.usage);
  }
  const parsed = parseDaemonFile(file, text, io.env, io.cwd);
  if (parsed.daemon) return { database: parsed.daemon.database, ...(parsed.daemon.databasePasswordFile ? { databasePasswordFile: parsed.daemon.databasePasswordFile } : {}) };
  if (fromEnv) return envSetting(fromEnv);
  const where = parsed.syntaxErrors[0] ? `:${parsed.syntaxErrors[0].line}: ${parsed.syntaxErrors[0].message}` : '';
  throw new CliError(`${file}${where}: the config file does not parse (campaignd validate shows every problem)`, EXIT.usage);
}

/** The database file the config names (commands that only work on a file of their own). */
export async function databaseFile(configFlag: string | undefined, io: CliIo): Promise<string> {
  return (await databaseSetting(configFlag, io)).database;
}

/** Opens the store read-only, with a clear message when there is none yet. */
export async function openStoreReadonly(setting: DatabaseSetting | string, io: Pick<CliIo, 'env'>): Promise<DatabaseHandle> {
  const s = typeof setting === 'string' ? { database: setting } : setting;
  const shown = describeTarget(s.database);
  if (s.database === ':memory:') throw new CliError('the configured database is ":memory:": there is nothing to show from another process', EXIT.problems);
  try {
    return await openConfiguredStore(s, io.env, { readonly: true });
  } catch (err) {
    throw storeOpenError(err, shown);
  }
}

/** An error of opening (or first reading) the store, as the CLI says it. */
export function storeOpenError(err: unknown, shown: string): CliError {
  if (err instanceof CliError) return err;
  if (isMissingDatabase(err)) return new CliError(`no database at ${shown}: has the daemon run yet?`, EXIT.problems);
  if (err instanceof PasswordFileError) return new CliError(err.message, EXIT.problems);
  return new CliError(`cannot open the database at ${shown}: ${err instanceof Error ? err.message : String(err)}`, EXIT.problems);
}

/** Refuses an empty database or one written by a newer campaignd. */
export async function checkSchema(handle: DatabaseHandle): Promise<void> {
  // On PostgreSQL the first query is where a missing database or a refused login shows.
  const schema = await schemaStatus(handle.db).catch((err: unknown) => {
    throw storeOpenError(err, handle.file);
  });
  if (schema.current === null) throw new CliError(`the database at ${handle.file} holds no campaignd data yet: has the daemon run yet?`, EXIT.problems);
  if (schema.unknown.length > 0) {
    throw new CliError(`database schema ${schema.unknown.at(-1)} at ${handle.file} is newer than this campaignd (knows up to ${schema.latest}): upgrade campaignd`, EXIT.database);
  }
}

/** Config → read-only store with a known schema; the caller closes it. */
export async function openReadStore(configFlag: string | undefined, io: CliIo): Promise<DatabaseHandle> {
  const handle = await openStoreReadonly(await databaseSetting(configFlag, io), io);
  try {
    await checkSchema(handle);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

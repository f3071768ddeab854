import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDaemonFile } from '../config/daemon.js';
import { settingProblems } from '../config/start-checks.js';
import type { DatabaseHandle } from '../store/database.js';
import { describeTarget, isPostgresUrl, redactUrls } from '../store/database-url.js';
import { assertSchemaKnown, migrateToLatest, NewerSchemaError, schemaStatus } from '../store/migrate.js';
import { isMissingDatabase, openConfiguredStore, PasswordFileError, type DatabaseSetting } from '../store/open-store.js';
import { systemClock } from '../time/clock.js';
import { warnDaemonProblems } from './daemon-problems.js';
import { resolveConfigPath } from './config-path.js';
import { CliError, EXIT, type CliIo } from './io.js';

// How every command but `run` reaches the store, so that each says the same thing the same
// way: the database named by the config (or $CAMPAIGND_DATABASE when the config cannot be
// read), opened read-only by the commands that only look (they work while the daemon writes
// and while it is down), or for writing and brought to this campaignd's schema by the ones
// that change it. A schema newer than this campaignd is exit 3 with one line, whichever.

/**
 * The database the config names (a SQLite file or a PostgreSQL URL) and its password file.
 * Only the daemon file is read: the campaign files (and the holiday calendars, phone
 * metadata and schemas they need) would double the start-up time of `campaignd status`
 * for a field they do not hold (issue 11: status ≤ 200 ms). The daemon file's errors,
 * which `run` refuses to start with, are printed as warnings (see warnDaemonProblems).
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
  if (parsed.daemon) {
    warnDaemonProblems([...parsed.problems, ...settingProblems(parsed.daemon, parsed, io.env)], io);
    return { database: parsed.daemon.database, ...(parsed.daemon.databasePasswordFile ? { databasePasswordFile: parsed.daemon.databasePasswordFile } : {}) };
  }
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

/**
 * An error of opening (or first reading) the store, as the CLI says it; `missing` replaces
 * the advice for a database that does not exist.
 */
export function storeOpenError(err: unknown, shown: string, missing = 'has the daemon run yet?'): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof NewerSchemaError) return new CliError(`${shown}: ${err.message}`, EXIT.database);
  if (isMissingDatabase(err)) return new CliError(`no database at ${shown}: ${missing}`, EXIT.problems);
  if (err instanceof PasswordFileError) return new CliError(err.message, EXIT.problems);
  return new CliError(`cannot open the database at ${shown}: ${redactUrls(err instanceof Error ? err.message : String(err))}`, EXIT.problems);
}

/** Refuses an empty database or one written by a newer campaignd. */
export async function checkSchema(handle: DatabaseHandle): Promise<void> {
  const shown = describeTarget(handle.file);
  try {
    // On PostgreSQL the first query is where a missing database or a refused login shows.
    const schema = await schemaStatus(handle.db);
    assertSchemaKnown(schema);
    if (schema.current === null) throw new CliError(`the database at ${shown} holds no campaignd data yet: has the daemon run yet?`, EXIT.problems);
  } catch (err) {
    throw storeOpenError(err, shown);
  }
}

/**
 * Read-only store with a known schema; the caller closes it. `setting` is the config's
 * database fields, or the --config flag to read them from.
 */
export async function openReadStore(setting: DatabaseSetting | string | undefined, io: CliIo): Promise<DatabaseHandle> {
  const handle = await openStoreReadonly(typeof setting === 'object' ? setting : await databaseSetting(setting, io), io);
  try {
    await checkSchema(handle);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

export interface WriteStoreOptions {
  /** PostgreSQL connections (batches written side by side); default 1. */
  maxConnections?: number;
  /** The advice when the PostgreSQL database does not exist (default: has the daemon run yet?). */
  missing?: string;
}

/**
 * The store a command changes, brought to this campaignd's schema (as `run` would); the
 * caller closes it. `setting` is the config's database fields, or the --config flag to
 * read them from.
 */
export async function openWriteStore(setting: DatabaseSetting | string | undefined, io: CliIo, opts: WriteStoreOptions = {}): Promise<DatabaseHandle> {
  const s = typeof setting === 'object' ? setting : await databaseSetting(setting, io);
  const shown = describeTarget(s.database);
  if (s.database === ':memory:') throw new CliError('the configured database is ":memory:": a change written there would vanish at once, unseen by the daemon', EXIT.problems);
  let handle: DatabaseHandle;
  try {
    handle = await openConfiguredStore(s, io.env, opts.maxConnections ? { maxConnections: opts.maxConnections } : {});
  } catch (err) {
    throw storeOpenError(err, shown, opts.missing);
  }
  try {
    await migrateToLatest(handle.db, {
      clock: systemClock,
      onFrozenHolderEnded: ({ idleMs }) => io.stderr.write(`${shown}: ended the database session of a frozen instance that held the migration lock (silent for ${Math.round(idleMs / 1000)} s)\n`),
    });
    return handle;
  } catch (err) {
    await handle.close();
    throw storeOpenError(err, shown, opts.missing);
  }
}

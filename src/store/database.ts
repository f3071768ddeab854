import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { StoreDialect } from './dialect.js';
import { registerWalSync, SYNCHRONOUS_DEFAULT } from './durable.js';
import type { Database } from './types.js';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

// The SQLite store factory: the ONLY file that knows SQLite's pragmas and files. Its
// PostgreSQL counterpart is postgres.ts; open-store.ts picks one from the setting.

export interface OpenDatabaseOptions {
  /** Open without write access (for `status` while the daemon writes). The file must exist. */
  readonly?: boolean;
  /** How long a statement waits for another connection's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
}

/** An open store: the kysely handle, its file, and how to close it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  /** The file as opened (absolute unless ':memory:'), or the PostgreSQL URL without its password. */
  file: string;
  dialect: StoreDialect;
  /** Copies what the write-ahead log holds into the database file, without blocking others. */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** WAL pages (4 KiB) before SQLite checkpoints by itself: about 40 MB. */
const AUTO_CHECKPOINT_PAGES = 10_000;

/**
 * SQLite page cache per connection, in KiB: 8 MiB (SQLite's default is 2 MiB). A cache
 * fills to its size in any process that reads enough pages (the daemon's start-up recovery
 * scans the leads table) and stays resident, so it counts against the daemon's 200 MB
 * (issue 6). At 1,000,000 leads, 32 MiB bought nothing measurable over 8 MiB — claim p50 and
 * p99, a first import and a re-import of 1M rows, status — since a miss reads from the OS
 * page cache, not the disk; it cost ~25 MB resident (bench/RESULTS.md, daemon-memory).
 */
const CACHE_KIB = 8 * 1024;

/** Thrown when a readonly open finds no database file. */
export class DatabaseMissingError extends Error {
  constructor(readonly file: string) {
    super(`database ${file} does not exist yet: start "campaignd run" or "campaignd leads import" first`);
    this.name = 'DatabaseMissingError';
  }
}

/** Opens (creating when needed, mode 0600) a SQLite store with WAL and foreign keys. */
export function openDatabase(file: string, opts: OpenDatabaseOptions = {}): DatabaseHandle {
  const memory = file === ':memory:';
  const resolved = memory ? file : path.resolve(file);
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;

  if (!memory) {
    if (opts.readonly) {
      if (!fs.existsSync(resolved)) throw new DatabaseMissingError(resolved);
    } else {
      createPrivateFile(resolved);
    }
  }

  const sqlite = new SqliteDatabase(resolved, {
    readonly: !!opts.readonly && !memory,
    fileMustExist: !!opts.readonly && !memory,
    timeout: busyTimeoutMs,
  });
  try {
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    sqlite.pragma('foreign_keys = ON');
    // WAL lets `status` read while the daemon writes; NORMAL is durable across process
    // crashes in WAL mode (only an OS crash or a power cut may lose the last transactions).
    // The one commit that must survive those too, the intent row before make_call, runs
    // through durableTransaction (durable.ts): the WAL is synced after it, off the thread.
    if (!opts.readonly && !memory) {
      sqlite.pragma('journal_mode = WAL');
      // Checkpoints copy the WAL into the database file and sync it: tens to hundreds of
      // ms on a slow disk. The daemon runs them off the hot path (checkpoint() below, on
      // a timer); the automatic one is only a safety net, so a claim rarely pays for it.
      sqlite.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    }
    sqlite.pragma(`synchronous = ${SYNCHRONOUS_DEFAULT}`);
    // A negative cache_size is in KiB.
    sqlite.pragma(`cache_size = -${CACHE_KIB}`);
  } catch (err) {
    sqlite.close();
    throw err;
  }

  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  let closed = false;
  /** Started at the first checkpoint (the daemon's timer); null when no worker could start. */
  let checkpointer: WalCheckpointer | null | undefined;
  // Durable commits sync the WAL file off the thread (durable.ts). Opened at the first one:
  // SQLite creates the file at the first write, and keeps it while this connection is open.
  let walFile: Promise<fsp.FileHandle> | undefined;
  const wal = !opts.readonly && !memory && String(sqlite.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
  if (wal) {
    registerWalSync(db, async () => {
      const opening = (walFile ??= fsp.open(`${resolved}-wal`, 'r'));
      try {
        const handle = await opening;
        await handle.datasync();
        // Should SQLite ever have made the WAL file anew (another connection switching the
        // journal mode, the last one closing), the handle syncs a file no longer written:
        // sync the one at the path instead, and keep that.
        const [held, now] = await Promise.all([handle.stat(), fsp.stat(`${resolved}-wal`)]);
        if (held.ino !== now.ino || held.dev !== now.dev) {
          walFile = fsp.open(`${resolved}-wal`, 'r');
          void handle.close().catch(() => undefined);
          await (await walFile).datasync();
        }
      } catch (err) {
        // The next durable commit opens the file again rather than failing for good.
        if (walFile === opening) walFile = undefined;
        void opening.then((h) => h.close(), () => undefined);
        throw err;
      }
    });
  }
  return {
    db,
    file: resolved,
    dialect: 'sqlite',
    async checkpoint() {
      if (closed || memory || opts.readonly) return;
      // Off the thread (wal-checkpointer.ts); on it only should no worker thread run here.
      if (wal && checkpointer === undefined) {
        try {
          checkpointer = startWalCheckpointer(resolved, { busyTimeoutMs, synchronous: SYNCHRONOUS_DEFAULT });
        } catch {
          checkpointer = null;
        }
      }
      if (checkpointer?.usable()) return checkpointer.checkpoint();
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    },
    async close() {
      if (closed) return;
      closed = true;
      // The checkpointer's connection closes first, so that this one, the last, folds the
      // log into the file and removes it.
      await checkpointer?.close();
      // kysely's SqliteDriver closes the better-sqlite3 handle on destroy.
      await db.destroy();
      await (await walFile?.catch(() => undefined))?.close();
    },
  };
}

/** The journal mode actually in effect (for tests and `status`). */
export function journalMode(handle: DatabaseHandle): Promise<string> {
  return pragmaValue(handle, 'journal_mode');
}

/** The value of one read-only pragma, via kysely's raw connection. */
async function pragmaValue(handle: DatabaseHandle, name: 'journal_mode' | 'synchronous' | 'foreign_keys' | 'busy_timeout'): Promise<string> {
  const result = await sql<Record<string, unknown>>`pragma ${sql.raw(name)}`.execute(handle.db);
  const row = result.rows[0] ?? {};
  return String(Object.values(row)[0]);
}

/** Values of the pragmas this factory sets, for tests and diagnostics. */
export async function storeSettings(handle: DatabaseHandle): Promise<{ journalMode: string; synchronous: string; foreignKeys: string; busyTimeout: string }> {
  return {
    journalMode: await pragmaValue(handle, 'journal_mode'),
    synchronous: await pragmaValue(handle, 'synchronous'),
    foreignKeys: await pragmaValue(handle, 'foreign_keys'),
    busyTimeout: await pragmaValue(handle, 'busy_timeout'),
  };
}

/**
 * kysely's SQLite driver prepares every query afresh and leaves the statement to the
 * garbage collector. The engine repeats the same few queries forever and the importer
 * repeats one large multi-row insert, so statements are kept by SQL text (LRU): no
 * re-parsing, and no native memory piling up behind the GC. Safe because kysely runs
 * one query at a time on its single connection (a streamed query holds it until done).
 */
function withStatementCache(sqlite: SqliteDatabase.Database, max = 256): { close(): void; prepare(sql: string): SqliteDatabase.Statement } {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (stmt) {
        cache.delete(sqlText);
      } else {
        stmt = sqlite.prepare(sqlText);
        if (cache.size >= max) {
          const oldest = cache.keys().next().value;
          if (oldest !== undefined) cache.delete(oldest);
        }
      }
      cache.set(sqlText, stmt);
      return stmt;
    },
  };
}

/** Creates the folder and an empty file readable by its owner only; tightens a new file. */
function createPrivateFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const existed = fs.existsSync(file);
  const fd = fs.openSync(file, 'a', 0o600);
  fs.closeSync(fd);
  // The umask may have widened the mode of a file we just made; an existing file keeps
  // whatever mode its operator chose.
  if (!existed) fs.chmodSync(file, 0o600);
}

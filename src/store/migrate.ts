import { sql, type Kysely } from 'kysely';
import { migrations as knownMigrations, type Migration } from '../../migrations/index.js';
import { isPostgres } from './dialect.js';
import { withSessionLock, type SessionLockOptions } from './session-lock.js';
import type { Clock } from '../time/clock.js';

// A small migrator of our own (rather than kysely's Migrator) so that the bookkeeping
// table is plain `schema_migrations(version, applied_at)` and a newer schema is refused
// with a message an operator can act on. Portable kysely only: the migrations branch on
// the dialect themselves (migrations/dialect.ts).

/** PostgreSQL advisory lock key of a migration run ("cdmg"): several instances start at once. */
export const MIGRATION_LOCK_KEY = 0x63646d67;

const TABLE = 'schema_migrations';

/** The database was written by a newer campaignd; this one must not touch it. */
export class NewerSchemaError extends Error {
  constructor(
    readonly databaseVersion: string,
    readonly knownVersion: string,
  ) {
    super(
      `database schema ${versionNumber(databaseVersion)} is newer than this campaignd (knows up to ${versionNumber(knownVersion)}): upgrade campaignd or use another database`,
    );
    this.name = 'NewerSchemaError';
  }
}

/** Where a database stands relative to the migrations this code knows. */
export interface SchemaStatus {
  /** Versions recorded in the database, in order. */
  applied: string[];
  /** Newest applied version, or null for an empty database. */
  current: string | null;
  /** Newest version this code knows. */
  latest: string;
  /** Known versions not yet applied. */
  pending: string[];
  /** Applied versions this code does not know (a newer campaignd wrote them). */
  unknown: string[];
}

/** Reads the schema state without changing anything (works on a readonly handle). */
export async function schemaStatus(db: Kysely<any>, migrations: Record<string, Migration> = knownMigrations): Promise<SchemaStatus> {
  const known = Object.keys(migrations).sort();
  const applied = (await hasTable(db)) ? await appliedVersions(db) : [];
  const appliedSet = new Set(applied);
  return {
    applied,
    current: applied.at(-1) ?? null,
    latest: known.at(-1) ?? '',
    pending: known.filter((v) => !appliedSet.has(v)),
    unknown: applied.filter((v) => !(v in migrations)),
  };
}

/** Whether `version` has been applied to this database (which has been migrated at least once). */
export async function hasMigration(db: Kysely<any>, version: string): Promise<boolean> {
  const row = await db.selectFrom(TABLE).select('version').where('version', '=', version).executeTakeFirst();
  return row !== undefined;
}

/** Throws NewerSchemaError when the database holds a version this code does not know. */
export function assertSchemaKnown(status: SchemaStatus): void {
  const newest = [...status.unknown].sort().at(-1);
  if (newest) throw new NewerSchemaError(newest, status.latest);
}

export interface MigrateOptions extends SessionLockOptions {
  /** Stamps each applied version's applied_at: the caller's clock, never read here. */
  clock: Pick<Clock, 'now'>;
  /** The migrations to apply (tests pass a partial set); default: every one this code knows. */
  migrations?: Record<string, Migration>;
}

/** Applies every pending migration, each in its own transaction; refuses a newer schema. */
export async function migrateToLatest(
  db: Kysely<any>,
  opts: MigrateOptions,
): Promise<{ applied: string[] }> {
  if (!isPostgres(db)) return migrate(db, opts);
  // On SQLite the first write of each step's transaction takes the database's write lock.
  // PostgreSQL locks rows, not the database: two instances creating the bookkeeping table
  // at once can collide in its catalog, so a whole run holds an advisory lock instead, on
  // one pinned connection, waiting as long as the other's run takes, unless that one is
  // frozen (session-lock.ts).
  return withSessionLock(db, MIGRATION_LOCK_KEY, opts, (conn) => migrate(conn, opts));
}

async function migrate(db: Kysely<any>, opts: MigrateOptions): Promise<{ applied: string[] }> {
  const { clock } = opts;
  const migrations = opts.migrations ?? knownMigrations;
  await db.schema
    .createTable(TABLE)
    .ifNotExists()
    .addColumn('version', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'bigint', (c) => c.notNull())
    .execute();

  const status = await schemaStatus(db, migrations);
  assertSchemaKnown(status);

  const applied: string[] = [];
  for (const version of status.pending) {
    const migration = migrations[version];
    if (!migration) continue;
    const ran = await db.transaction().execute(async (trx) => {
      // Claiming the version is the transaction's first statement, so it takes the write
      // lock at once: a second process migrating concurrently waits, then sees the row
      // and skips the step instead of running it twice.
      const claim = await trx
        .insertInto(TABLE)
        .values({ version, applied_at: clock.now() })
        .onConflict((oc) => oc.column('version').doNothing())
        .executeTakeFirst();
      if (Number(claim.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
      await migration.up(trx);
      return true;
    });
    if (ran) applied.push(version);
  }
  return { applied };
}

// One catalogue lookup, not kysely's introspection of every table and column: `status`
// asks this on each run, and on PostgreSQL the introspection cost ~5 ms of its 400.
async function hasTable(db: Kysely<any>): Promise<boolean> {
  const found = isPostgres(db)
    ? await sql<{ present: boolean }>`select to_regclass(${TABLE}) is not null as present`.execute(db)
    : await sql<{ present: number }>`select count(*) as present from sqlite_master where type = 'table' and name = ${TABLE}`.execute(db);
  return Boolean(found.rows[0]?.present);
}

async function appliedVersions(db: Kysely<any>): Promise<string[]> {
  const rows = await db.selectFrom(TABLE).select('version').orderBy('version').execute();
  return rows.map((r) => String(r.version));
}

/** '0003_add_x' → '0003'. */
function versionNumber(version: string): string {
  return version.split('_')[0] ?? version;
}

import type { ColumnDataType, CreateTableBuilder, Kysely } from 'kysely';
import { isPostgres } from '../src/store/dialect.js';

// One migration history for both databases. Each migration writes portable kysely where
// it can and branches here where SQLite and PostgreSQL differ, so that SQLite's schema
// stays exactly what it always was and PostgreSQL gets the same tables.

export { isPostgres };

/**
 * The type of an `integer` column. SQLite's integers are 64-bit whatever the name;
 * PostgreSQL's `integer` is 32-bit, too small for ids a service hands out or counts that
 * grow for years, so every integer is bigint there (read back as a number: postgres.ts).
 */
export function integer(db: Kysely<any>): ColumnDataType {
  return isPostgres(db) ? 'bigint' : 'integer';
}

/** Adds the table's `id`: SQLite's autoincrement rowid, PostgreSQL's identity column. */
export function withId<TB extends string>(db: Kysely<any>, table: CreateTableBuilder<TB, never>): CreateTableBuilder<TB, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

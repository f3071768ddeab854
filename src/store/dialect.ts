import { PostgresAdapter, type Kysely } from 'kysely';

// Which database a kysely handle speaks to. Repositories receive only the handle (or a
// transaction of it), so the few places whose SQL must differ ask it here; the adapter
// is shared by a database and its transactions.

export type StoreDialect = 'sqlite' | 'postgres';

export function dialectOf(db: Kysely<any>): StoreDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export function isPostgres(db: Kysely<any>): boolean {
  return dialectOf(db) === 'postgres';
}

// The URL helpers live apart, free of kysely, for the config parser; re-exported here for
// the code that already reached them through this module.
export { isPostgresUrl, redactUrl, redactUrls } from './database-url.js';

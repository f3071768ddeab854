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

/** Whether a database setting names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** The URL without its password, for messages, logs and `status`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // Not parseable: keep only what precedes any credentials.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Every PostgreSQL URL in `text` with its password hidden (error messages may quote the setting). */
export function redactUrls(text: string): string {
  return text.replace(/postgres(ql)?:\/\/[^\s'"]+/gi, (m) => redactUrl(m));
}

import type { CompiledQuery, Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// Named prepared statements on PostgreSQL for the queries the engine repeats forever.
//
// Sent as text, each statement is parsed, analysed and planned by the server every time.
// Counted with pg_stat_statements on the black-box bench (3,000 calls, 2026-11-29), planning
// alone was 1.64 s of the server's 5.2 s for the daemon's statements, a third of its time,
// and the server's CPU had become what set the calls per second. A statement marked here
// (the store's `prepared` queries and the result upsert: fixed text, values bound) is parsed
// once per connection under a name, and each run only binds and executes; the server plans
// it again only where a generic plan would cost more than a custom one (plan_cache_mode).
// A generic plan is chosen after a few runs, from the table as it is then, and kept until
// the table's statistics change: a query whose best plan depends on its values (a list of
// keys in one array) is left as text, planned each run (prepared's `planEachRun`).
//
// The hazard, and why it heals: a named statement's result columns are fixed when it is
// parsed. When another instance's migration adds a column to a table this one reads with
// `select *` (a rolling upgrade, README "Several active instances"), the server refuses the
// next run with "cached plan must not change result type" (SQLSTATE 0A000). The connection
// then forgets that name, so the statement is parsed afresh under a new one on its next run,
// and the group commit runs the refused batch again (group-commit.ts), as after a deadlock.
// The same pattern as pgx's statement cache and Postgrex's prepared queries.

/** Prefix of a statement to run under a name (a comment: the server ignores it). */
const NAMED = '/* named */ ';

/** Marks `query` as one to parse once per connection (PostgreSQL; on SQLite the store's own cache does this). */
export function namedStatement<R>(db: Kysely<Database>, query: CompiledQuery<R>): CompiledQuery<R> {
  return isPostgres(db) ? { ...query, sql: NAMED + query.sql } : query;
}

/** Whether `text` (after any other marker in front of it) asks to be named. */
export function wantsName(text: string): boolean {
  return text.startsWith(NAMED) || (text.startsWith('/*') && text.includes(`*/ ${NAMED}`));
}

/** The server refused a named statement whose tables changed shape since it was parsed. */
export function isStaleStatementError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type');
}

/** One connection's names: a statement's text → the name it was parsed under there. */
export class StatementNames {
  readonly #names = new Map<string, string>();
  #next = 0;

  nameOf(text: string): string {
    let name = this.#names.get(text);
    if (name === undefined) this.#names.set(text, (name = `campaignd_${++this.#next}`));
    return name;
  }

  /** The server's copy under the old name is left as it is: a new name never meets it. */
  forget(text: string): void {
    this.#names.delete(text);
  }
}

import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { deferredWrite } from './pg-pipeline.js';
import { namedStatement } from './pg-statement-names.js';
import type { Database } from './types.js';

// Queries built once, run many times. kysely builds an immutable operation tree and
// compiles it to SQL on every execution: 20–50 µs of JavaScript, several times what
// SQLite needs to run the engine's hot statements (a claim, an answer, an outcome), and
// the largest share of the engine's CPU per call once commits were batched. A prepared
// query is written with the same builder, compiled by the database's own dialect once,
// and each run only binds new values, so it stays portable across dialects.

/** Marks where a named value goes in the compiled query's parameters. */
class Slot {
  constructor(readonly name: string) {}
}

interface Template {
  sql: string;
  query: CompiledQuery['query'];
  /** For each parameter: the name of the value to bind, or a constant of the query. */
  parameters: (Slot | { constant: unknown })[];
}

/** A query compiled once per dialect; `P` names its values, `R` is its row type. */
export interface Prepared<P, R> {
  /** The rows of a SELECT, or of a write's RETURNING. */
  rows(db: Kysely<Database>, values: P): Promise<R[]>;
  /** How many rows a write changed. */
  affected(db: Kysely<Database>, values: P): Promise<number>;
  /**
   * A write whose caller reads nothing back: inside a transaction on PostgreSQL it goes with
   * the next statement instead of a round trip of its own (pg-pipeline.ts).
   */
  write(db: Kysely<Database>, values: P): Promise<void>;
}

export interface PreparedOptions {
  /**
   * Sent as text, so that PostgreSQL plans each run for its values: for a query whose best
   * plan depends on them, such as a list of keys in one array of any length. A named
   * statement's plan may become one generic plan chosen early, while the table was small,
   * and kept: a batch's lookup by call ids took 3 ms a run that way instead of 0.4
   * (pg-statement-names.ts).
   */
  planEachRun?: boolean;
}

/**
 * Prepares `build(db, values)`. Each value must reach the query as a bound parameter
 * (a comparison, a SET or VALUES entry): `build` runs once with markers in place of the
 * values, and never with real ones. A list (`in`) has the length it had when built.
 */
export function prepared<P extends object, R>(build: (db: Kysely<Database>, values: P) => Compilable<R>, opts: PreparedOptions = {}): Prepared<P, R> {
  // Keyed by the dialect's adapter, which a database and its transactions share.
  const templates = new WeakMap<object, Template>();

  function template(db: Kysely<Database>): Template {
    const adapter = db.getExecutor().adapter;
    let t = templates.get(adapter);
    if (t) return t;
    const markers = new Proxy({} as P, { get: (_, name) => new Slot(String(name)) });
    // On PostgreSQL the server also parses and plans it once per connection, under a name.
    const built = build(db, markers).compile();
    const compiled = opts.planEachRun ? built : namedStatement(db, built);
    t = {
      sql: compiled.sql,
      query: compiled.query,
      parameters: compiled.parameters.map((p) => (p instanceof Slot ? p : { constant: p })),
    };
    templates.set(adapter, t);
    return t;
  }

  function compiledFor(db: Kysely<Database>, values: P): CompiledQuery<R> {
    const t = template(db);
    const parameters = t.parameters.map((p) => (p instanceof Slot ? bind(values as Record<string, unknown>, p.name) : p.constant));
    return { sql: t.sql, query: t.query, queryId: { queryId: t.sql }, parameters };
  }

  return {
    async rows(db, values) {
      return (await db.executeQuery(compiledFor(db, values))).rows;
    },
    async affected(db, values) {
      return Number((await db.executeQuery(compiledFor(db, values))).numAffectedRows ?? 0);
    },
    async write(db, values) {
      await db.executeQuery(deferredWrite(db, compiledFor(db, values)));
    },
  };
}

function bind(values: Record<string, unknown>, name: string): unknown {
  const value = values[name];
  // A value the caller forgot would silently bind NULL.
  if (value === undefined) throw new TypeError(`prepared query: no value for "${name}"`);
  return value;
}

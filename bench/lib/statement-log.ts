// Every SQL statement a benchmark's process runs, counted and timed by its text, so that a
// figure "per call" can be split into the statements behind it. SQLite: better-sqlite3's
// Statement methods (the time is the statement's own, run in this thread). PostgreSQL:
// pg's Client.query (the time is the round trip: send, server, answer). Installed by
// patching the libraries' prototypes for the rest of the process; a bench that asks for it
// (`--statements`) measures with the patch's small overhead, the others never load it.
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { performance } from 'node:perf_hooks';

export interface StatementStat {
  sql: string;
  count: number;
  /** Total ms: in-thread time (SQLite) or round trip (PostgreSQL). */
  ms: number;
  /** The longest single run, ms: what one run of it held the thread (SQLite) or waited. */
  max: number;
}

export interface StatementLog {
  /** Forgets what was counted so far. */
  reset(): void;
  /** The statements counted since the last reset, most time first. */
  stats(): StatementStat[];
}

let installed: { counts: Map<string, StatementStat> } | null = null;

function record(counts: Map<string, StatementStat>, sqlText: string, ms: number): void {
  const key = sqlText.replace(/\s+/g, ' ').trim();
  let s = counts.get(key);
  if (!s) {
    s = { sql: key, count: 0, ms: 0, max: 0 };
    counts.set(key, s);
  }
  s.count++;
  s.ms += ms;
  if (ms > s.max) s.max = ms;
}

/** Starts counting (once per process); returns the log. */
export function installStatementLog(): StatementLog {
  if (!installed) {
    const counts = new Map<string, StatementStat>();
    installed = { counts };
    // better-sqlite3's Statement class is reachable only through a statement.
    const probe = new SqliteDatabase(':memory:');
    const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
    probe.close();
    for (const method of ['run', 'get', 'all', 'iterate'] as const) {
      const original = proto[method]!;
      proto[method] = function (this: { source: string }, ...args: unknown[]) {
        const t0 = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          record(counts, this.source, performance.now() - t0);
        }
      };
    }
    const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '(cursor or submittable)');
      const t0 = performance.now();
      const done = (): void => record(counts, text, performance.now() - t0);
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = (...cbArgs: unknown[]) => {
          done();
          return (last as (...a: unknown[]) => unknown)(...cbArgs);
        };
        return query.apply(this, args);
      }
      const result = query.apply(this, args);
      if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(done, done);
      else done();
      return result;
    };
  }
  const { counts } = installed;
  return {
    reset: () => counts.clear(),
    stats: () => [...counts.values()].sort((a, b) => b.ms - a.ms),
  };
}

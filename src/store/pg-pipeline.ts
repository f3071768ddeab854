import { CompiledQuery, type Kysely, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { isPostgres } from './dialect.js';
import { isStaleStatementError, StatementNames, wantsName } from './pg-statement-names.js';
import type { Database } from './types.js';

// Deferred writes on PostgreSQL: fewer round trips for the engine's transactions.
//
// The daemon's store is one connection (postgres.ts), and every statement on it is a round
// trip: sent, run, answered, and only then the next. Counted black-box (3,000 calls, bench
// engine-blackbox --statements), a call took 7.3 of them, ~0.6 ms each, on the engine's one
// connection: the connection, not the thread, set the calls per second. Most of those
// statements are writes whose answer nobody reads: the result's upsert, the listing's
// confirmation, the lead's next state, make_call's answer on its attempt. Such a write is
// marked (`deferred`); inside a transaction it is held back and sent with the next statement
// that is awaited, or with the COMMIT, in one exchange (pg's pipeline mode: each statement
// its own message, the answers in order). The transaction's BEGIN is held back the same way.
//
// What stays true: statements reach the server in the order they were issued, so a read sees
// every write before it, and COMMIT comes after all of them. A deferred write that fails aborts
// the transaction as it would have at once; the error surfaces at the next awaited statement
// (or the COMMIT, which then ends the aborted transaction without writing anything), marked
// by `isDeferredWriteError` so that a group commit can find which item's write it was
// (group-commit.ts runs the batch again with `flushDeferredWrites` after each item).
// Outside a transaction a marked write runs at once, as any statement.

/** Prefix of a deferred write's SQL (a comment: the server ignores it). */
const DEFERRED = '/* deferred */ ';
/** Sends the writes held back so far, and nothing else. */
const FLUSH = '/* flush deferred writes */';
const deferredError = Symbol('deferredWrite');

/** Marks `query` as a write whose result its caller never reads (no row count, no RETURNING). */
export function deferredWrite<R>(db: Kysely<Database>, query: CompiledQuery<R>): CompiledQuery<R> {
  return isPostgres(db) ? { ...query, sql: DEFERRED + query.sql } : query;
}

/** Sends the writes `trx` held back (PostgreSQL), so that an error of theirs surfaces here. */
export async function flushDeferredWrites(trx: Kysely<Database>): Promise<void> {
  if (isPostgres(trx)) await trx.executeQuery(CompiledQuery.raw(FLUSH));
}

/** Whether `err` was raised by a deferred write (sent later than its caller issued it). */
export function isDeferredWriteError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[deferredError] === true;
}

/** What kysely's connection reads of a result; a held-back statement has none yet. */
const noResult = (): PostgresQueryResult<never> => ({ command: undefined, rowCount: null, rows: [] }) as unknown as PostgresQueryResult<never>;

interface Statement {
  text: string;
  values: readonly unknown[];
  deferred: boolean;
}

/** Observes the exchanges with the server (tests count round trips with it). */
export type ExchangeObserver = (statements: number) => void;

/** `pool` as kysely's dialect takes it, its clients holding back deferred writes. */
export function pipeliningPool(pool: pg.Pool, observe?: ExchangeObserver): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PipeliningClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrapped.get(client);
      if (!w) wrapped.set(client, (w = new PipeliningClient(client, observe)));
      return w;
    },
    end: () => pool.end(),
  };
}

type PipelineClient = pg.PoolClient & { pipeline: boolean };

class PipeliningClient implements PostgresPoolClient {
  #held: Statement[] = [];
  #inTransaction = false;
  /** Statements sent and not answered: pipeline mode is left only when none are. */
  #inFlight = 0;
  /** The named statements of this connection (pg-statement-names.ts). */
  readonly #names = new StatementNames();

  constructor(
    readonly client: pg.PoolClient,
    readonly observe: ExchangeObserver | undefined,
  ) {}

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: never): never;
  query(config: unknown, values?: readonly unknown[]): unknown {
    if (typeof config !== 'string') {
      // A cursor keeps a portal open across exchanges, which pipeline mode cannot hold.
      if (this.#held.length > 0 || this.#inFlight > 0) throw new Error('pg-pipeline: a cursor inside a transaction with deferred writes');
      return this.client.query(config as pg.Submittable);
    }
    return this.#statement(config, values ?? []);
  }

  release(): void {
    this.#held = [];
    this.#inTransaction = false;
    this.client.release();
  }

  async #statement(text: string, values: readonly unknown[]): Promise<unknown> {
    const verb = transactionVerb(text);
    if (verb === 'begin') {
      this.#inTransaction = true;
      this.#held.push({ text, values, deferred: true });
      return noResult();
    }
    if (verb === 'rollback') {
      this.#inTransaction = false;
      const begunOnServer = !(this.#held.length > 0 && transactionVerb(this.#held[0]!.text) === 'begin');
      this.#held = [];
      // A transaction whose BEGIN never left has nothing on the server to roll back.
      return begunOnServer ? this.#send([{ text, values, deferred: false }]) : noResult();
    }
    if (this.#inTransaction && text.startsWith(DEFERRED) && plainValues(values)) {
      this.#held.push({ text, values, deferred: true });
      return noResult();
    }
    if (verb === 'commit') this.#inTransaction = false;
    const batch = this.#held;
    this.#held = [];
    if (text === FLUSH) return batch.length > 0 ? (await this.#send(batch), noResult()) : noResult();
    batch.push({ text, values, deferred: false });
    try {
      return await this.#send(batch);
    } catch (err) {
      // Outside a transaction nothing was aborted: a named statement refused because its
      // table changed shape (pg-statement-names.ts) runs again, parsed afresh.
      if (!this.#inTransaction && verb === null && isStaleStatementError(err)) return this.#send(batch);
      throw err;
    }
  }

  /** Sends `batch` in one exchange; the last statement's result, or the first error in order. */
  async #send(batch: readonly Statement[]): Promise<unknown> {
    this.observe?.(batch.length);
    const client = this.client as PipelineClient;
    this.#inFlight += batch.length;
    if (batch.length > 1) client.pipeline = true;
    const sent = batch.map((s) =>
      wantsName(s.text) ? client.query({ name: this.#names.nameOf(s.text), text: s.text, values: s.values as unknown[] }) : client.query(s.text, s.values as unknown[]),
    );
    const settled = await Promise.allSettled(sent);
    this.#inFlight -= batch.length;
    if (this.#inFlight === 0) client.pipeline = false;
    for (const [i, outcome] of settled.entries()) {
      if (outcome.status === 'rejected' && isStaleStatementError(outcome.reason)) this.#names.forget(batch[i]!.text);
    }
    for (const [i, outcome] of settled.entries()) {
      if (outcome.status === 'fulfilled') continue;
      const err = outcome.reason as unknown;
      if (batch[i]!.deferred && typeof err === 'object' && err !== null) (err as Record<symbol, unknown>)[deferredError] = true;
      throw err;
    }
    return (settled[settled.length - 1] as PromiseFulfilledResult<unknown>).value;
  }
}

/** The transaction statements kysely sends (postgres-driver.js); other text is null. */
function transactionVerb(text: string): 'begin' | 'commit' | 'rollback' | null {
  if (text === 'begin' || text.startsWith('start transaction')) return 'begin';
  if (text === 'commit') return 'commit';
  if (text === 'rollback') return 'rollback';
  return null;
}

/**
 * Only values pg can never fail to send are held back: an error raised before a statement
 * leaves the client does not abort the transaction, so a COMMIT sent with it would commit
 * the rest.
 */
function plainValues(values: readonly unknown[]): boolean {
  for (const v of values) {
    if (v === null) continue;
    const t = typeof v;
    if (t !== 'string' && t !== 'number' && t !== 'boolean' && t !== 'bigint') return false;
  }
  return true;
}

import pg from 'pg';
import Cursor from 'pg-cursor';
import { Kysely, PostgresDialect } from 'kysely';
import type { DatabaseHandle } from './database.js';
import { redactUrl, redactUrls } from './database-url.js';
import { pipeliningPool, type ExchangeObserver } from './pg-pipeline.js';
import type { Database } from './types.js';

// The PostgreSQL store factory (docs/design.md §10): the same DatabaseHandle as the
// SQLite one in database.ts, over a pg Pool.

export interface OpenPostgresOptions {
  /** Connect with every transaction read-only (`status`, `explain`). */
  readonly?: boolean;
  /** From PGPASSWORD or `database_password_file`; never part of the configured URL. */
  password?: string;
  /**
   * Connections in the pool (default 1). The engine relies on one connection serialising
   * its transactions, as SQLite's single connection does: a claim and the intent written
   * after it never interleave with another transaction of the same process.
   */
  maxConnections?: number;
  /** How long a statement may wait for a lock, in ms (default 5000), like SQLite's busy timeout. */
  lockTimeoutMs?: number;
  /**
   * How long the server lets a transaction of ours sit idle between two statements before it
   * ends the session and rolls the transaction back, in ms (default IDLE_IN_TRANSACTION_MS).
   * A process frozen inside a transaction (a paused VM or container, SIGSTOP, a swapped-out
   * host) keeps its connection open, so without this the server would keep its row locks,
   * and every other instance's claims and results waiting on them, until it woke. The daemon
   * sets it from its lease (app.ts): a process idle that long has lost its lease anyway.
   */
  idleInTransactionMs?: number;
  /** Told the number of statements of each exchange with the server (tests count round trips). */
  observeExchanges?: ExchangeObserver;
}

/**
 * For the commands (an import, `store copy`): longer than any wait of ours inside a
 * transaction (a lock waits lock_timeout at most; a batch waits for the one before it to take
 * its ids), so only a process that stopped (Ctrl-Z on an import) meets it.
 */
export const IDLE_IN_TRANSACTION_MS = 30_000;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Counts, ids and epoch-ms times are int8 on PostgreSQL, which pg hands over as strings
 * (a JavaScript number cannot hold every int8); ours stay far below 2^53, and the code
 * expects numbers as SQLite gives them. Set on this pool only, not on pg globally.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format !== 'binary' && (oid === INT8_OID || oid === NUMERIC_OID)) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

export function openPostgres(url: string, opts: OpenPostgresOptions = {}): DatabaseHandle {
  const settings = [`-c lock_timeout=${Math.max(0, Math.floor(opts.lockTimeoutMs ?? 5000))}`, `-c idle_in_transaction_session_timeout=${Math.max(1, Math.floor(opts.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS))}`];
  if (opts.readonly) settings.push('-c default_transaction_read_only=on');
  const pool = new pg.Pool({
    connectionString: withPassword(url, opts.password),
    max: opts.maxConnections ?? 1,
    // Connections stay open while idle (pg's default closes them after 10 s): a new one
    // costs a backend's start and its cold catalog caches, so the first request after a
    // quiet spell, the common case of a CRM posting now and then, took ~32 ms against ~2
    // (a lead's view on this machine, scratch measurement in bench/RESULTS.md, issue 23).
    // TCP keepalive finds a connection a firewall or a server restart broke; the pool drops
    // it (the error listener below). Idle connections never hold a command's process open.
    idleTimeoutMillis: 0,
    keepAlive: true,
    allowExitOnIdle: true,
    types,
    options: settings.join(' '),
    application_name: 'campaignd',
  });
  // An idle connection that breaks (server restart) is dropped by the pool; the next
  // query opens a new one and reports any error itself. Without a listener it would
  // crash the process.
  pool.on('error', () => undefined);
  // A connection the server ends while it is lent out (idle_in_transaction_session_timeout
  // above, a server restart) emits 'error', which pg-pool listens for only while the
  // connection is idle: unheard, it would end the process. The statement that was running,
  // or the next one, fails with it instead, and the pool drops the connection on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const redacted = withRedactedErrors(pool);
  // Deferred writes go with the next statement (pg-pipeline.ts); `withPgClient` and COPY use the pool as it is.
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pipeliningPool(redacted, opts.observeExchanges), cursor: Cursor }) });
  rawPools.set(db, redacted);
  let closed = false;
  return {
    db,
    file: redactUrl(url),
    dialect: 'postgres',
    // PostgreSQL checkpoints by itself; commits are durable with synchronous_commit on.
    async checkpoint() {},
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

/**
 * pg lets the connection string's fields win over separate options, so a password given
 * apart reaches pg inside the URL it is handed (never the URL shown: `file` is redacted).
 */
function withPassword(url: string, password: string | undefined): string {
  if (password === undefined) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** Connection errors may quote the URL: the password never reaches a message. */
function withRedactedErrors(pool: pg.Pool): pg.Pool {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  (pool as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    try {
      return await connect();
    } catch (err) {
      if (err instanceof Error) err.message = redactUrls(err.message);
      throw err;
    }
  };
  return pool;
}

// The raw pg client, for what kysely cannot send: `COPY … FROM STDIN` (lead import). Keyed
// by the handle's kysely instance, as the code that needs it receives only that.
const rawPools = new WeakMap<Kysely<Database>, pg.Pool>();

/** Whether `withPgClient` can reach a raw client for `db` (a store opened by openPostgres, not a transaction of it). */
export function hasPgClient(db: Kysely<Database>): boolean {
  return rawPools.has(db);
}

/**
 * Runs `fn` on one connection of the store's own pool, given both raw (for COPY) and as a
 * kysely instance bound to that connection, so that a transaction begun through the one
 * holds the statements of the other. The connection is the pool's (of one, for the daemon):
 * hold it no longer than one transaction, as kysely would, and never from inside another
 * query of `db` (with one connection that would wait forever).
 */
export async function withPgClient<T>(db: Kysely<Database>, fn: (client: pg.PoolClient, clientDb: Kysely<Database>) => Promise<T>): Promise<T> {
  const pool = rawPools.get(db);
  if (!pool) throw new Error('withPgClient: not a store opened by openPostgres');
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const bound = { connect: async () => ({ query: client.query.bind(client), release: () => undefined }), end: async () => undefined };
    return await fn(client, new Kysely<Database>({ dialect: new PostgresDialect({ pool: bound as unknown as pg.Pool, cursor: Cursor }) }));
  } catch (err) {
    // A COPY cut short may leave the connection mid-protocol: the pool must not hand it on.
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(broken);
  }
}

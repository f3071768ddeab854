import type { Kysely, Transaction } from 'kysely';
import { durableTransaction } from './durable.js';
import { flushDeferredWrites, isDeferredWriteError } from './pg-pipeline.js';
import { isStaleStatementError } from './pg-statement-names.js';
import type { Database } from './types.js';

// Group commit. A commit writes every page the transaction touched to the write-ahead
// log, and the engine's small transactions (an answer recorded, a webhook applied) touch
// the same few pages: a commit each cost ~60 µs of the ~2 ms of CPU a call took. Work
// queued during one turn of the event loop runs in ONE transaction instead, and each
// caller resumes only after that commit, so what it was told is durable is durable.
// One batch is in flight at a time: work queued while it runs waits for its commit and
// then goes in the next batch together. On PostgreSQL a batch is several round trips, and
// starting a transaction per turn meanwhile made nearly every batch a batch of one (a
// BEGIN and a COMMIT per webhook, waiting in line for the same connection).
// A daemon with many accounts shares one group commit between its accounts' engines, and
// the claims made before make_call go in it too (`durable`: that batch is committed with
// synchronous=FULL): each commit has a fixed CPU cost however little it holds, and 200
// accounts committing their own one-item batches, claims apart, spent most of a core on it.

/** Database work for a shared transaction: reads and conditional writes only, no side effects. */
export type TransactionWork<R> = (trx: Transaction<Database>, batch: BatchKeys) => Promise<R>;

/**
 * What the items of one batch said they will look up (`RunOptions.key`), so that the
 * first of them can read the rows of all of them in one statement: on PostgreSQL a batch
 * is one round trip after another on one connection, and twenty webhooks each looking up
 * its attempt were twenty of them.
 */
export interface BatchKeys {
  /** The values of `kind` the batch's items registered, in queue order. */
  of(kind: string): readonly string[];
}

export interface GroupCommit {
  /**
   * Runs `work` in the transaction of this turn's batch; resolves after it committed.
   * `durable`: that commit is on stable storage (synchronous=FULL, durable.ts) before this
   * resolves, as a claim must be before its make_call is sent.
   */
  run<R>(work: TransactionWork<R>, opts?: RunOptions): Promise<R>;
}

export interface RunOptions {
  durable?: boolean;
  /**
   * Work no caller is waiting on to place or free a slot (a call listing's observations):
   * it goes in a batch after the work that is, at most `backgroundBatch` items at a time.
   * With 200 accounts each confirming a listing of ~100 webhook successes at about the same
   * moment, 20,000 items queued at once held every webhook and claim behind them for 4–10 s
   * (bench/RESULTS.md, "200 accounts: the webhooks that timed out"); so the urgent work
   * overtakes, and the backlog drains between it in short batches.
   */
  background?: boolean;
  /** A key this work will look up in the batch's transaction (see `BatchKeys`). */
  key?: { kind: string; value: string };
}

interface Queued {
  work: TransactionWork<unknown>;
  key: RunOptions['key'];
  durable: boolean;
  background: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions {
  /**
   * Schedules the flush after the I/O callbacks of this turn (default `setImmediate`):
   * a turn of the event loop, not a timer, so no time passes for it under any clock.
   */
  defer?: (fn: () => void) => void;
  /** Most work items in one transaction, so one batch never holds the store for long. */
  maxBatch?: number;
  /**
   * Commits durable work (claims) in transactions of its own, before the rest of the turn's
   * work. With several active instances a claim locks its account's lease row (the fencing
   * trigger, FOR SHARE) until its commit, and the lease's renewal waits for that lock: in a
   * batch with a turn's webhooks and queued deliveries, renewals waited long enough for
   * leases to expire under their holders (3 instances, 200 accounts), and accounts moved
   * back and forth. Default false: one daemon gains by one commit for all.
   */
  durableApart?: boolean;
  /** Most background items in one batch (default 32), so a batch of them stays short. */
  backgroundBatch?: number;
}

/** How often a batch rolled back by a deadlock runs again before its callers get the error. */
const MAX_RETRIES = 3;

/**
 * PostgreSQL's deadlock_detected and serialization_failure, and a named statement refused
 * after a migration changed its table (its connection parses it afresh next time,
 * pg-statement-names.ts): the transaction may simply run again.
 */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001' || isStaleStatementError(err);
}

/** Creates a group committer on `db`. */
export function createGroupCommit(db: Kysely<Database>, opts: GroupCommitOptions = {}): GroupCommit {
  const defer = opts.defer ?? ((fn: () => void) => void setImmediate(fn));
  const maxBatch = opts.maxBatch ?? 256;
  const backgroundBatch = Math.min(maxBatch, opts.backgroundBatch ?? 32);
  /** A batch holding durable work is committed durably as a whole (the rest only gains by it). */
  const transaction = <T>(batch: readonly Queued[], fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> =>
    batch.some((item) => item.durable) ? durableTransaction(db, fn) : db.transaction().execute(fn);
  const queue: Queued[] = [];
  let scheduled = false;
  let inFlight = false;

  /**
   * The next batch: at most maxBatch items, durable ones first and alone with
   * `durableApart`; background items after the rest, at most `backgroundBatch` of them
   * (each kind keeps its own order).
   */
  function nextBatch(): Queued[] {
    const durable = opts.durableApart ? queue.filter((item) => item.durable).slice(0, maxBatch) : [];
    let picked: Queued[];
    if (durable.length > 0) picked = durable;
    else {
      // A backlog keeps its share of every batch, so that urgent work never starves it.
      const background = queue.filter((item) => item.background).slice(0, backgroundBatch);
      const urgent = queue.filter((item) => !item.background).slice(0, maxBatch - background.length);
      picked = [...urgent, ...background.slice(0, maxBatch - urgent.length)];
    }
    const taken = new Set(picked);
    for (let i = queue.length - 1; i >= 0; i--) if (taken.has(queue[i]!)) queue.splice(i, 1);
    return picked;
  }

  async function flush(): Promise<void> {
    scheduled = false;
    inFlight = true;
    try {
      while (queue.length > 0) {
        await commitBatch(nextBatch());
        // Back to the event loop before the next batch. On SQLite a batch never leaves the
        // thread (the driver is synchronous: its promises settle as microtasks), so batches
        // back to back were one task: a webhook, a make_call answer or an API request that
        // arrived meanwhile waited for every batch of a backlog, not for one (bench/RESULTS.md).
        if (queue.length > 0) await new Promise<void>((resolve) => defer(resolve));
      }
    } finally {
      inFlight = false;
    }
  }

  /** Runs one batch to its commit; each item's caller learns its own result. Never throws. */
  async function commitBatch(items: Queued[]): Promise<void> {
    let batch = items;
    let retries = 0;
    // A write held back to go with a later statement (PostgreSQL, pg-pipeline.ts) fails there,
    // in another item's work or at the COMMIT. The batch then runs again with each item's
    // writes sent at its end, so that the error lands on the item that wrote.
    let eachItemFlushed = false;
    while (batch.length > 0) {
      let culprit = -1;
      try {
        const keys = batchKeys(batch);
        const results = await transaction(batch, async (trx) => {
          const out: unknown[] = [];
          for (const [i, item] of batch.entries()) {
            try {
              out.push(await item.work(trx, keys));
              if (eachItemFlushed) await flushDeferredWrites(trx);
            } catch (err) {
              culprit = i;
              throw err;
            }
          }
          return out;
        });
        batch.forEach((item, i) => item.resolve(results[i]));
        return;
      } catch (err) {
        // PostgreSQL broke a deadlock with another instance's transaction (or a
        // serialization conflict) by rolling this one back: nothing of it was written, and
        // the work is reads and conditional writes only, so the whole batch runs again.
        if (isRetryable(err) && retries < MAX_RETRIES) {
          retries++;
          continue;
        }
        if (isDeferredWriteError(err) && !eachItemFlushed) {
          eachItemFlushed = true;
          continue;
        }
        // BEGIN or COMMIT failed: the store's trouble, not one item's, and nothing of the
        // batch was written. Every caller learns it, as each would have alone.
        if (culprit < 0) {
          for (const item of batch) item.reject(err);
          return;
        }
        // One item failed and rolled the batch back: it alone gets the error, and the
        // others run again together (one account's claim refused by its fence never
        // fails another account's claims of the same batch).
        batch[culprit]!.reject(err);
        batch = batch.filter((_, i) => i !== culprit);
      }
    }
  }

  function batchKeys(items: readonly Queued[]): BatchKeys {
    return {
      of: (kind) => {
        const values: string[] = [];
        for (const item of items) if (item.key?.kind === kind) values.push(item.key.value);
        return values;
      },
    };
  }

  function schedule(): void {
    // A batch in flight takes what was queued meanwhile once it committed.
    if (scheduled || inFlight) return;
    scheduled = true;
    defer(() => void flush());
  }

  return {
    run<R>(work: TransactionWork<R>, runOpts: RunOptions = {}): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ work, key: runOpts.key, durable: runOpts.durable === true, background: runOpts.background === true, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}

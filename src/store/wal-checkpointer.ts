import { createRequire } from 'node:module';
import type { Worker as WorkerType } from 'node:worker_threads';

// The SQLite store's checkpoints, run on a connection of their own in a worker thread.
//
// A checkpoint copies the write-ahead log into the database file and syncs that file: 6–30
// ms on this machine's disk, hundreds on a slow or busy one. On the daemon's own connection
// it held the one JavaScript thread for that long every 10 s (bench/RESULTS.md, "The API
// while the engine dials"): every claim, webhook and API request arriving meanwhile waited.
// Here the thread only posts a message. A PASSIVE checkpoint from another connection is what
// SQLite's WAL is designed for: it copies what no reader still needs and never blocks the
// writer, which carries on appending to the log meanwhile.

/** Runs checkpoints off the calling thread; `close` ends the worker and its connection. */
export interface WalCheckpointer {
  /** False once the worker has failed or ended: the caller checkpoints by itself then. */
  usable(): boolean;
  /** Resolves when the checkpoint has run (or rejects with its error). */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

// CommonJS, evaluated in the worker: it loads better-sqlite3 from the path resolved here, so
// that neither the bundle (dist/app) nor the sources (vitest, tsx) need a worker file of
// their own. Checkpoints are answered in order, one at a time.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
db.pragma('synchronous = ' + workerData.synchronous);
parentPort.on('message', (msg) => {
  if (msg === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ id: msg, ok: true });
  } catch (err) {
    parentPort.postMessage({ id: msg, ok: false, message: err && err.message ? err.message : String(err) });
  }
});
`;

export function startWalCheckpointer(file: string, opts: { busyTimeoutMs: number; synchronous: string }): WalCheckpointer {
  const requireHere = createRequire(import.meta.url);
  const driver = requireHere.resolve('better-sqlite3');
  // Loaded here, not imported: every command opens a store, and only the daemon checkpoints
  // (worker_threads is ~3 ms of a `campaignd status`).
  const { Worker } = requireHere('node:worker_threads') as { Worker: typeof WorkerType };
  // A worker is an isolate of its own (~8 MB resident); this one allocates next to nothing, so
  // its heap is kept small.
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, ...opts }, resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 } });
  // An idle checkpointer must not keep a process alive that has nothing else to do.
  worker.unref();
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let next = 0;
  let failed: Error | null = null;
  const failAll = (err: Error): void => {
    failed ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('message', (msg: { id: number; ok: boolean; message?: string }) => {
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (waiting.size === 0) worker.unref();
    if (msg.ok) w?.resolve();
    else w?.reject(new Error(`checkpoint of ${file}: ${msg.message ?? 'failed'}`));
  });
  worker.on('error', (err) => failAll(new Error(`checkpoint worker for ${file}: ${err.message}`)));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => {
    failAll(new Error(`checkpoint worker for ${file} has ended`));
    resolve();
  }));
  return {
    usable: () => failed === null,
    checkpoint() {
      if (failed) return Promise.reject(failed);
      const id = next++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        // Held while a checkpoint is in flight, so that its answer is awaited.
        worker.ref();
        worker.postMessage(id);
      });
    },
    async close() {
      if (failed) return exited;
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}

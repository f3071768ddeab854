// Real child processes for the end-to-end tests: `campaignd simulator` and `campaignd run`
// spawned through bin/campaignd.js, the package's bin, which runs the compiled build in dist/
// (`npm test` builds it; test/helpers/build.ts rebuilds a stale one), as an operator would (and the black-box fake
// service, a plain node script). Readiness is awaited from
// a log line or /healthz (never a guessed sleep); every output byte is kept so the tests
// can search it (secrets, messages); `stopAllProcesses()` in afterEach kills whatever is
// still running so a failed test never leaves a daemon behind.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from './wait.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/campaignd.js');

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running child with everything it has written so far. */
export interface Proc {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly name: string;
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited. */
  readonly exited: Promise<Exit>;
  running(): boolean;
  /** Resolves with the first output line (stdout or stderr) matching `re`; rejects on exit or timeout. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Number of output lines matching `re` so far. */
  count(re: RegExp): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  stop(graceMs?: number): Promise<Exit>;
}

const live = new Set<Proc>();

/**
 * For every campaignd a test spawns: the build was checked at the start of the run
 * (test/helpers/build.ts), so bin/campaignd.js skips its "source newer than the build"
 * warning, which a source edited during the run would otherwise print on stderr.
 */
export const BUILD_CHECKED_ENV = { CAMPAIGND_STALE_CHECK: 'off' } as const;

/** The parent environment without any CAMPAIGND_* variable, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAMPAIGND_')));
  return { ...env, NO_COLOR: '1', ...BUILD_CHECKED_ENV, ...extra };
}

/** Spawns `node bin/campaignd.js ARGS` and tracks it for `stopAllProcesses`. */
export function spawnCampaignd(name: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
  return spawnNode(name, BIN, args, opts);
}

/** Spawns `node SCRIPT ARGS` (a test's own server, e.g. the black-box fake service) and tracks it. */
export function spawnNode(name: string, script: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
  return spawnTracked(name, process.execPath, [script, ...args], opts);
}

/**
 * Spawns an executable script itself (`bin/campaignd.js ARGS`, as a shell runs `campaignd`),
 * so that its `#!` line, and the node flags on it, apply; tracked like `spawnNode`.
 */
export function spawnExecutable(name: string, file: string, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Proc {
  return spawnTracked(name, file, args, opts);
}

function spawnTracked(name: string, command: string, args: string[], opts: { env?: Record<string, string>; cwd?: string }): Proc {
  const child = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    notify();
  });
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      done = true;
      live.delete(proc);
      notify();
      resolve({ code, signal });
    });
  });
  const lines = (): string[] => `${out}\n${err}`.split('\n');
  const proc: Proc = {
    child,
    pid: child.pid ?? -1,
    name,
    stdout: () => out,
    stderr: () => err,
    exited,
    running: () => !done,
    count: (re) => lines().filter((l) => re.test(l)).length,
    waitForLine: (re, timeoutMs = 20_000) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const hit = lines().find((l) => re.test(l));
          if (hit !== undefined) finish(() => resolve(hit));
          else if (done) finish(() => reject(new Error(`${name} exited before printing ${re}; stderr:\n${err.slice(-2000)}\nstdout tail:\n${out.slice(-2000)}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`${name}: no line matching ${re} within ${timeoutMs} ms; stderr:\n${err.slice(-2000)}`))), timeoutMs);
        const finish = (f: () => void): void => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      }),
    stop: async (graceMs = 15_000) => {
      if (!done) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  live.add(proc);
  return proc;
}

/** Kills (SIGKILL) every child still running; for afterEach. */
export async function stopAllProcesses(): Promise<void> {
  const procs = [...live];
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}

/** Runs a one-shot `campaignd ARGS` to its end. */
export function runCampaignd(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: cleanEnv(env), timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A port that was free a moment ago (so a restarted daemon keeps its webhook address). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** GET a URL, returning status and body text (never throws on HTTP errors). */
export async function httpGet(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** Polls `url` until it answers `status`. */
export async function waitForHttp(url: string, status = 200, timeoutMs = 20_000): Promise<void> {
  await waitUntil(
    async () => {
      try {
        return (await httpGet(url)).status === status;
      } catch {
        return false;
      }
    },
    { timeoutMs, intervalMs: 50, message: `${url} to answer ${status}` },
  );
}

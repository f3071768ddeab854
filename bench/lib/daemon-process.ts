// A real daemon for the black-box benches: the compiled `campaignd run` in a process of its
// own, its log in a file as a supervisor keeps it (two lines per call at hundreds of calls a
// second would otherwise pile up in the bench's memory), and a wait for a line of that log.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { cleanEnv } from '../../test/helpers/processes.js';

export interface DaemonProcess {
  pid: number;
  exited: Promise<number | null>;
  /** SIGTERM: the daemon's orderly stop. */
  stop(): void;
  kill(): void;
}

/** `node NODE_FLAGS ENTRY run --config CONFIG`, in the config's folder, stdout and stderr appended to `logFile`. */
export function startDaemon(entry: string, nodeFlags: readonly string[], configPath: string, env: Record<string, string>, logFile: string): DaemonProcess {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeFlags, entry, 'run', '--config', configPath], { cwd: path.dirname(configPath), env: cleanEnv(env), stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { pid: child.pid ?? -1, exited, stop: () => child.kill('SIGTERM'), kill: () => child.kill('SIGKILL') };
}

/**
 * Waits until the log file has a line matching `re` written after byte `from` (or the daemon
 * exits, or `timeoutMs` passes), looking every `everyMs`; resolves with the file's size then,
 * to wait for a later line from there. Only what was appended is read on each look.
 */
export async function waitForLog(logFile: string, re: RegExp, exited: Promise<number | null>, timeoutMs: number, opts: { from?: number; everyMs?: number } = {}): Promise<number> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  const tail = (): string => fs.readFileSync(logFile, 'utf8').slice(-2000);
  const deadline = performance.now() + timeoutMs;
  let offset = opts.from ?? 0;
  let carry = '';
  while (performance.now() < deadline) {
    const size = fs.statSync(logFile).size;
    if (size > offset) {
      const fd = fs.openSync(logFile, 'r');
      const buf = Buffer.alloc(size - offset);
      fs.readSync(fd, buf, 0, buf.length, offset);
      fs.closeSync(fd);
      offset = size;
      // A line cut at the read's end is finished by the next read.
      const text = carry + buf.toString('utf8');
      const cut = text.lastIndexOf('\n') + 1;
      carry = text.slice(cut);
      if (re.test(text.slice(0, cut))) return offset;
    }
    if (gone !== undefined) throw new Error(`the daemon exited ${gone} before ${re}: ${tail()}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 250));
  }
  throw new Error(`no ${re} in the daemon's log within ${timeoutMs / 1000} s: ${tail()}`);
}

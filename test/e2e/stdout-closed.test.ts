// A command whose reader has gone (`campaignd status | head`, a pager quit early) ends
// quietly with the shell's SIGPIPE status, 141, instead of node's unhandled EPIPE stack.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv } from '../helpers/processes.js';

/** Runs the bin with its stdout a pipe whose reading end this side closes at once. */
function runWithStdoutClosed(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the child has even started node: its first write meets a pipe without a reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('stdout closed by the reader', () => {
  it('ends the command with status 141 and nothing on stderr', async () => {
    for (const args of [['--help'], ['simulator', '--help']]) {
      expect({ args, ...(await runWithStdoutClosed(args)) }).toEqual({ args, code: 141, stderr: '' });
    }
  });
});

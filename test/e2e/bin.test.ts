// bin/campaignd.js, the package's bin, in a folder laid out like a checkout: it refuses to
// start without a build, and warns when a source is newer than the build it runs (a
// `git pull` without `npm run build`). A stand-in build keeps this test about the bin alone.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/processes.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A checkout-like folder: bin/campaignd.js, and a dist/app/main.js that echoes its argv. */
function layout(withBuild: boolean): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bin-'));
  dirs.push(dir);
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.copyFileSync(BIN, path.join(dir, 'bin/campaignd.js'));
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src/main.ts'), '');
  if (withBuild) {
    fs.mkdirSync(path.join(dir, 'dist/app'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dist/app/main.js'), 'export async function main(argv) { process.stdout.write(JSON.stringify(argv)); return 0; }\n');
  }
  return dir;
}

function run(dir: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(dir, 'bin/campaignd.js'), 'status', '--json'], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('bin/campaignd.js', () => {
  it('runs the build with the arguments, silently when the build is newer than every source', async () => {
    const dir = layout(true);
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, 'src/main.ts'), past, past);
    const r = await run(dir);
    expect(r).toEqual({ code: 0, stdout: '["status","--json"]', stderr: '' });
  });

  it('warns on stderr, naming the file and the fix, when a source is newer than the build', async () => {
    const dir = layout(true);
    const future = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, 'src/main.ts'), future, future);
    const r = await run(dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`campaignd: warning: ${path.join(dir, 'src/main.ts')} is newer than the build in dist/: run "npm run build" (this process runs the older build)\n`);
    // The test setup's switch, for a checkout whose sources change while tests run.
    expect((await run(dir, { CAMPAIGND_STALE_CHECK: 'off' })).stderr).toBe('');
  });

  it('finds a newer source in a nested folder of migrations/, and ignores files that are not sources', async () => {
    const dir = layout(true);
    const past = new Date(Date.now() - 60_000);
    const future = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(dir, 'src/main.ts'), past, past);
    fs.mkdirSync(path.join(dir, 'src/notes'));
    fs.writeFileSync(path.join(dir, 'src/notes/README.md'), '');
    fs.utimesSync(path.join(dir, 'src/notes/README.md'), future, future);
    expect((await run(dir)).stderr).toBe('');
    const deep = path.join(dir, 'migrations/postgres/0002_more.ts');
    fs.mkdirSync(path.dirname(deep), { recursive: true });
    fs.writeFileSync(deep, '');
    fs.utimesSync(deep, future, future);
    expect((await run(dir)).stderr).toBe(`campaignd: warning: ${deep} is newer than the build in dist/: run "npm run build" (this process runs the older build)\n`);
  });

  it('refuses to start without a build, with exit 2 and the command that makes one', async () => {
    const dir = layout(false);
    const r = await run(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`campaignd: no compiled build (${path.join(dir, 'dist/app/main.js')} is missing): run "npm run build" in ${dir}\n`);
  });
});

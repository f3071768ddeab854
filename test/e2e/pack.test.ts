// What ships works (issue 11): the package as `npm pack` makes it, installed into an empty
// folder the way a user installs it, runs `campaignd --version`, `validate` and a short
// `demo` through the bin npm linked, with no TypeScript loader and no sources. The install
// uses npm's cache (--prefer-offline; `npm ci` filled it) and compiles better-sqlite3 from
// source when no prebuilt binary can be fetched: about 1.5 min on a loaded 2-core machine,
// which is this test's cost in `npm run test:slow`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, ROOT } from '../helpers/processes.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
// A guard, not a goal: the compile alone takes ~2 min on a quiet 2-core machine, and `npm run test:slow`
// runs another long file beside this one.
const INSTALL_MS = 10 * 60_000;

function run(file: string, args: string[], cwd: string, timeout: number, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: cleanEnv(env), timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let work: string;
let app: string;
let bin: string;
let tarballFiles: string[];
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-pack-'));
  // The build is current: `npm test` built it, and the global setup rebuilds a stale one.
  // --ignore-scripts keeps `prepare` from rewriting dist/ under the tests running beside this one.
  const packed = await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT, 60_000);
  expect(packed.code, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  tarballFiles = info!.files.map((f) => f.path);
  app = path.join(work, 'app');
  fs.mkdirSync(app);
  // An empty project, as a user's would be; better-sqlite3 may run its install script.
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'campaignd-user', private: true, allowScripts: { 'better-sqlite3': true } }));
  const installed = await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(work, info!.filename)], app, INSTALL_MS);
  expect(installed.code, `${installed.stdout}\n${installed.stderr}`).toBe(0);
  bin = path.join(app, 'node_modules/.bin/campaignd');
}, INSTALL_MS + 60_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('the packed package, installed into an empty folder', () => {
  it('holds the compiled build and the example config, not the TypeScript sources', () => {
    expect(tarballFiles).toContain('bin/campaignd.js');
    expect(tarballFiles).toContain('dist/app/main.js');
    expect(tarballFiles).toContain('config/campaignd.yaml');
    // Editors are pointed at it (README, "Configuration").
    expect(fs.existsSync(path.join(app, 'node_modules/campaignd/config/campaign.schema.json'))).toBe(true);
    // The bundle only: neither the sources nor tsc's unbundled output, nor source maps that point at them.
    expect(tarballFiles.filter((f) => /\.ts$|\.map$|^src\/|^dist\/src\/|^test\//.test(f))).toEqual([]);
    // Nothing that loads TypeScript at run time came with it.
    expect(fs.existsSync(path.join(app, 'node_modules/tsx'))).toBe(false);
    expect(fs.existsSync(path.join(app, 'node_modules/typescript'))).toBe(false);
  });

  it('campaignd --version prints the package version', async () => {
    const r = await run(bin, ['--version'], app, 30_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  it('campaignd validate checks the shipped example config', async () => {
    const config = path.join(app, 'node_modules/campaignd/config/campaignd.yaml');
    const r = await run(bin, ['validate', '--config', config], app, 30_000, { CAMPAIGND_API_TOKEN: 't', CAMPAIGND_WEBHOOK_SECRET: 'w' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/campaignd validate: 0 errors, \d+ warnings; 2 campaigns ok \(demo, follow-up\); offline\n$/);
  });

  it('campaignd demo runs a whole campaign against the simulator', async () => {
    const r = await run(bin, ['demo', '--time-scale', '60', '--timeout', '90'], app, 120_000);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/demo complete in \d+ s: \d+ leads reached/);
  }, 130_000);
});

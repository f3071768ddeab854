// The e2e and black-box tests spawn bin/campaignd.js, which runs the compiled build in dist/
// (no TypeScript loader at run time). `npm test` builds first; this vitest global setup
// covers a single file run (`npx vitest run test/e2e/status.test.ts`) after an edit: when a
// source is newer than the build, it rebuilds, so a test never runs yesterday's code.
// A lock folder keeps two test runs in one checkout from compiling over each other.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './processes.js';

const ENTRY = path.join(ROOT, 'dist/app/main.js');
const LOCK = path.join(ROOT, 'dist/.build-lock');
/** A lock older than this was left by a killed run. */
const STALE_LOCK_MS = 3 * 60_000;

/** The newest source the build is made of, or null when the build is at least as new. */
export function newerSource(): string | null {
  if (!fs.existsSync(ENTRY)) return ENTRY;
  const builtAt = fs.statSync(ENTRY).mtimeMs;
  const files = ['tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs'].map((f) => path.join(ROOT, f));
  for (const folder of ['src', 'migrations']) {
    for (const name of fs.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (name.endsWith('.ts')) files.push(path.join(ROOT, folder, name));
    }
  }
  return files.find((f) => fs.statSync(f).mtimeMs > builtAt) ?? null;
}

/** Runs the build (`tsc -p tsconfig.build.json`, then scripts/bundle.mjs) when it is missing or older than a source. */
export async function buildIfStale(): Promise<void> {
  if (!newerSource()) return;
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  // Awaiting another process's build: there is no event to await across processes.
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      else await sleep(250);
    }
  }
  try {
    const stale = newerSource();
    if (!stale) return;
    process.stderr.write(`test setup: ${path.relative(ROOT, stale)} is newer than the build: npm run build\n`);
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    try {
      execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
    } catch (err) {
      // tsc emits despite type errors. `npm test` typechecks before it builds; here, in a
      // single-file run, a type error elsewhere should not hide what this test says.
      if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw err;
      process.stderr.write('test setup: tsc reported type errors (above); the tests run the emitted build\n');
    }
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/bundle.mjs')], { cwd: ROOT, stdio: 'inherit' });
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Whether this vitest run names only unit and integration test files, which never spawn the
 * bin: then a stale build is left alone (a rebuild takes ~20 s on a loaded 2-core machine).
 * A run without file filters (`npm test`) or naming e2e, black-box or stress tests builds.
 */
export function runNeedsNoBin(argv: readonly string[]): boolean {
  const named = argv.filter((a) => /(^|\/)test\//.test(a));
  return named.length > 0 && named.every((a) => /(^|\/)test\/(unit|integration)\//.test(a));
}

/** vitest globalSetup entry. */
export default async function setup(): Promise<void> {
  if (runNeedsNoBin(process.argv.slice(2))) return;
  await buildIfStale();
}

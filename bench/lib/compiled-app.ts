// The compiled campaignd laid out as the deployments run it (the container's /app, or
// /opt/campaignd after `npm run build`): dist/ from `tsc -p tsconfig.build.json`,
// bin/campaignd.js, package.json, node_modules. Built into a temp folder so that a
// benchmark measures the working tree as it is without touching the checkout's dist/
// (others may be using it); node_modules is a link to the checkout's.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../../test/helpers/processes.js';

/** The compiled app: its entry script, and the node flags the entry's `#!` line gives it. */
export interface CompiledApp {
  entry: string;
  /**
   * The flags of `#!/usr/bin/env -S node FLAGS`, for NODE_OPTIONS: the test helpers spawn
   * `node SCRIPT`, which skips the `#!` line the deployments execute through.
   */
  nodeOptions: string;
}

/**
 * Compiles the sources into `dir` and lays out the app as the deployments run it.
 * `external`: packages left out of the bundle besides the usual ones (`['pg']` for a bench's
 * --statements, whose patch reaches only node_modules' pg).
 */
export function buildCompiledApp(dir: string, opts: { external?: readonly string[] } = {}): CompiledApp {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(dir, 'dist')], { cwd: ROOT, stdio: 'inherit' });
  } catch (err) {
    // tsc emits despite type errors; in a shared checkout they are often someone's work in
    // progress, which should not stop a memory measurement (the errors are printed above).
    if (!fs.existsSync(path.join(dir, 'dist/src/main.js'))) throw err;
    console.log('  (tsc reported type errors; measuring the emitted build anyway)');
  }
  const external = (opts.external ?? []).flatMap((name) => ['--external', name]);
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/bundle.mjs'), path.join(dir, 'dist'), ...external], { cwd: ROOT, stdio: 'inherit' });
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  const entry = path.join(dir, 'bin', 'campaignd.js');
  fs.copyFileSync(path.join(ROOT, 'bin', 'campaignd.js'), entry);
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { entry, nodeOptions: shebangNodeFlags(entry) };
}

/** The node flags of a `#!/usr/bin/env -S node FLAGS` line ('' when there are none). */
export function shebangNodeFlags(script: string): string {
  const first = fs.readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  return /^#!\S*env -S node\s*(.*)$/.exec(first)?.[1]?.trim() ?? '';
}

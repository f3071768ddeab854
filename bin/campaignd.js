#!/usr/bin/env -S node --max-semi-space-size=4
// `campaignd`: the package's bin (npx campaignd, npm's node_modules/.bin/campaignd, the
// systemd unit and the container image all run this file). It runs the compiled build,
// dist/app/main.js (tsc's output bundled by scripts/bundle.mjs), on plain node: no TypeScript
// loader at run time. `npm ci` produces the build (the `prepare` script runs `npm run
// build`), `npm pack` puts it in the tarball, and `npm test` rebuilds it before the tests
// that spawn this file. Without a loader, and with a few bundled files instead of ~400
// modules, `campaignd status` answers in a fraction of the time and the daemon holds ~50 MB
// less resident memory (bench/RESULTS.md).
//
// --max-semi-space-size=4 (MB; node's default is 16): the young generation is garbage
// headroom, and at 16 MB per semi-space it is as large as everything the daemon keeps alive.
// 4 MB saves ~20 MB resident in the daemon and ~35 MB in a million-row `leads import` for
// more frequent, shorter scavenges; no CPU cost was measurable at the daemon's call rates.
// The flags apply when the file is executed (`campaignd ...`, `./bin/campaignd.js ...`), not
// under `node bin/campaignd.js`. Only flags node documents belong here: an unknown one stops
// node from starting.
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Built-ins by require(), not import: an ES import of node:fs reads every export of its
// facade, lazy ones included, and compiles the streams stack (~3 ms of every command).
const require = module.createRequire(import.meta.url);
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(root, 'dist/app/main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(`campaignd: no compiled build (${entry} is missing): run "npm run build" in ${root}\n`);
  // 2, like a bad config: systemd's RestartPreventExitStatus leaves it for a person.
  process.exit(2);
}
// The test setup builds before the tests and turns the check off: in a shared checkout a
// source edited during the run would otherwise add this warning to every process's stderr.
if (process.env.CAMPAIGND_STALE_CHECK !== 'off') warnIfStale(entry);
// Node ≥ 22.1 can keep V8's compiled code of the build on disk (in os.tmpdir(), or
// $NODE_COMPILE_CACHE) and skip much of compiling it next time (on node 20, compiling is
// ~15 ms of a `campaignd status`, issue 11). It never throws, and a folder it cannot write
// only leaves it off. Node 20 has no such call, and no flagless equivalent.
module.enableCompileCache?.();
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv.slice(2));

/**
 * A build older than the sources it came from (a `git pull` without `npm run build`) would
 * run the old code silently; say so on stderr (the journal). A deployment without sources
 * (the container image) has nothing to compare. Synchronous and by hand: ~6 ms for ~330
 * sources, where node 20's recursive readdir alone took ~11 ms and the same walk through
 * fs/promises kept every command waiting on ~330 round trips to the thread pool (~25–35 ms
 * of a `campaignd status` or `--version`).
 */
function warnIfStale(built) {
  const builtAt = fs.statSync(built).mtimeMs;
  const newer = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      const file = path.join(dir, e.name);
      const found = e.isDirectory() ? newer(file) : e.name.endsWith('.ts') && (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) > builtAt ? file : undefined;
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const folder of ['src', 'migrations']) {
    const found = newer(path.join(root, folder));
    if (found === undefined) continue;
    process.stderr.write(`campaignd: warning: ${found} is newer than the build in dist/: run "npm run build" (this process runs the older build)\n`);
    return;
  }
}

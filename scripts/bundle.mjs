// Second half of `npm run build` (the first is `tsc -p tsconfig.build.json`, which
// typechecks and emits dist/src/): bundles dist/src/main.js and everything it imports into
// dist/app/, the code the package's bin runs.
//
// Why a bundle: `campaignd status` must answer within 200 ms as a whole process (issue 11).
// From tsc's output, node loaded ~400 small files (kysely alone is 279) and spent ~0.3 s of
// CPU resolving, reading and linking them before any work; the bundle is a few files and
// ~0.1 s. Splitting keeps each command's code in its own chunk, loaded when the command runs
// (src/main.ts imports the commands lazily), so `status` never loads the simulator.
//
// `status` itself is bundled apart, into dist/app/status.js and one chunk, that main.js
// imports: split with the rest, its code came in ~15 chunks (one per set of commands sharing
// a module), and node 20 spends ~0.5 ms on each module it resolves, reads and links. It
// holds its own copy of what it shares with main.js (src/cli/io.ts: main recognises its
// CliError by isCliError) and with the other commands (kysely, yaml, luxon, the store: no
// state crosses between commands, one runs per process).
//
// Left outside the bundle, loaded from node_modules at run time:
//  - better-sqlite3: a native addon, found through its package folder;
//  - pino, pino-pretty, thread-stream: pino starts its transports in worker threads from
//    files it resolves by package path, which a bundle does not have.
//
//   node scripts/bundle.mjs [DIST] [--external NAME]…      (DIST defaults to ./dist)
//
// `--external pg` (a bench's --statements, bench/lib/compiled-app.ts) leaves pg outside too,
// so that the statement log's patch of node_modules' pg reaches the daemon's queries.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const extraExternal = args.flatMap((a, i) => (args[i - 1] === '--external' ? [a] : []));
const distArg = args.find((a, i) => a !== '--external' && args[i - 1] !== '--external');
const dist = path.resolve(distArg ?? path.join(root, 'dist'));

const outdir = path.join(dist, 'app');
const STATUS = path.join(dist, 'src/cli/status.js');
// The packages left outside (above): all CommonJS.
const EXTERNAL = ['better-sqlite3', 'pino', 'pino-pretty', 'thread-stream', ...extraExternal];
/**
 * Loads the external packages with require() (the banner's) rather than an ES import: node
 * imports a CommonJS package by first loading its export lexer and parsing the package's
 * entry for its named exports, ~5 ms of every `campaignd status` (which imports
 * better-sqlite3; 2 % of its instructions) for names a require() has at once. The bundle's
 * own interop gives the code the default export (module.exports) and its properties as the
 * named ones, as node does.
 *
 * Node's own modules (`node:fs`, `node:os`, …) are loaded the same way: an ES import of a
 * built-in goes through its ES facade, which reads every export once, lazy getters
 * included, so `import fs from 'node:fs'` compiled the whole streams stack (fs.ReadStream)
 * for a `status` that never streams a file: ~3 ms, and ~1 ms each for os and util.
 */
const requireExternals = {
  name: 'require-externals',
  setup(b) {
    const filter = new RegExp(`^(node:.*|${EXTERNAL.map((n) => n.replace(/[-/]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter }, (args) => {
      if (args.kind === 'require-call') return { path: args.path, external: true };
      // A dynamic import stays one: split into a chunk of its own, the module would have
      // only a default export, and `const { x } = await import(…)` would get nothing.
      return args.kind === 'import-statement' ? { path: args.path, namespace: 'require-external' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'require-external' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};
const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Package resolution starts at the checkout, also for a build in a temp folder.
  nodePaths: [path.join(root, 'node_modules')],
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle call require() for node's built-ins.
  banner: { js: "import { createRequire as __campaigndRequire } from 'node:module'; const require = __campaigndRequire(import.meta.url);" },
  sourcemap: 'linked',
  write: false,
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};
const split = await build({
  ...common,
  entryPoints: [path.join(dist, 'src/main.js')],
  outdir,
  splitting: true,
  plugins: [
    requireExternals,
    {
      name: 'status-apart',
      setup(b) {
        b.onResolve({ filter: /\/status\.js$/ }, (args) =>
          args.kind === 'dynamic-import' && path.resolve(args.resolveDir, args.path) === STATUS ? { path: './status.js', external: true } : undefined,
        );
      },
    },
  ],
});
// A renamed or moved import would put status back among the shared chunks, silently.
if (!split.outputFiles.some((f) => path.basename(f.path) === 'main.js' && f.text.includes('import("./status.js")'))) {
  throw new Error(`scripts/bundle.mjs: main.js no longer imports ./status.js (${STATUS} as a dynamic import of src/main.ts)`);
}
// Split too, but only along its own dynamic imports: pg (./postgres.js) stays in a chunk
// loaded when the database is a PostgreSQL URL. Its chunks are named apart from the others.
const status = await build({ ...common, entryPoints: { status: STATUS }, outdir, splitting: true, chunkNames: 'status-[name]-[hash]', plugins: [requireExternals] });

// Replaced in an order that a campaignd starting meanwhile (a test, a benchmark) survives:
// the new chunks first (their names carry a content hash; status.js does not, but it imports
// only its own chunks, so either main.js runs with either status.js), the entry that names
// them last, then the previous build's chunks, which would otherwise pile up.
const entry = path.join(outdir, 'main.js');
const files = [...split.outputFiles, ...status.outputFiles].sort((a, b) => Number(a.path.startsWith(entry)) - Number(b.path.startsWith(entry)));
fs.mkdirSync(outdir, { recursive: true });
for (const file of files) {
  const temp = `${file.path}.${process.pid}.tmp`;
  fs.writeFileSync(temp, file.contents);
  fs.renameSync(temp, file.path);
}
const keep = new Set(files.map((f) => path.basename(f.path)));
for (const name of fs.readdirSync(outdir)) if (!keep.has(name) && !name.endsWith('.tmp')) fs.rmSync(path.join(outdir, name), { force: true });

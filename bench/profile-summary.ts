// `npx tsx bench/profile-summary.ts FILE.cpuprofile [N] [--from US --to US]`: where a V8 CPU
// profile's time went, as self time summed by function (top N, default 40) and by source
// area (the project's folders, each node_modules package, node's internals, GC, idle), and
// the longest stretches the thread was busy without a break (what a request arriving then
// waits for). --from/--to keep the samples between two instants on CLOCK_MONOTONIC in µs
// (the profile's clock; bench/api.ts prints its windows' bounds so). Written for the
// throughput bench's `--cpu-profile` (the engine phase alone), usable on any profile.
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const flag = (name: string): number | undefined => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const [value] = args.splice(i, 2).slice(1);
  return Number(value);
};
const from = flag('--from') ?? -Infinity;
const to = flag('--to') ?? Infinity;
const [file, topArg] = args;
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [N] [--from US --to US]');
const top = Number(topArg ?? 40);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
/** The kept samples in order: when each was taken and its leaf node. */
const kept: { at: number; id: number; us: number }[] = [];
let at = profile.startTime;
for (const [i, id] of profile.samples.entries()) {
  at += profile.timeDeltas[i] ?? 0;
  if (at < from || at > to) continue;
  const us = profile.timeDeltas[i] ?? 0;
  kept.push({ at, id, us });
  selfUs.set(id, (selfUs.get(id) ?? 0) + us);
}
const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** The area a frame belongs to: a package, a folder of the project, or node itself. */
function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `pkg ${pkg[1]}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`;
  const own = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (own) return own[1] === 'src' ? `src/${own[2]!.split('/').slice(0, -1).join('/') || '.'}/${own[2]!.split('/').pop()}` : own[1]!;
  return url;
}

const byFunction = new Map<string, number>();
const byArea = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url ? `${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}` : '';
  const fKey = `${functionName || '(anonymous)'} ${where}`;
  byFunction.set(fKey, (byFunction.get(fKey) ?? 0) + us);
  const a = area(url, functionName);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
}
// Inclusive time: each sample counted once for every distinct function on its stack.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const frameKey = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (!n.callFrame.url.includes('/src/')) continue;
    seen.add(frameKey(n));
  }
  for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
}
// By part of the system: each sample goes to the deepest frame on its stack that belongs
// to a known part, so native work (a SQLite statement, a socket write) is charged to the
// code that asked for it.
function part(url: string): string | null {
  if (url === 'node:inspector') return 'the profiler itself (writing the profile)';
  if (url.includes('/src/simulator/')) return 'simulator (src/simulator)';
  if (url.includes('/src/service/')) return 'service client (src/service; the fetch under it)';
  if (url.includes('/src/http/')) return "daemon's HTTP (webhook route)";
  if (url.includes('/src/store/') || url.includes('/kysely/') || url.includes('better-sqlite3') || url.includes('/pg/') || url.includes('pg-protocol')) return 'store (src/store, kysely, driver, SQLite)';
  if (url.includes('/src/engine/') || url.includes('/src/results/') || url.includes('/src/rules/') || url.includes('/src/time/') || url.includes('/src/phone-zones/')) return 'engine (src/engine, results, rules, time)';
  if (url.includes('/src/log/') || url.includes('/pino')) return 'logging';
  if (url.includes('/bench/')) return 'bench harness';
  return null;
}
const byPart = new Map<string, number>();
for (const [id, us] of selfUs) {
  let name: string | null = null;
  for (let cur: number | undefined = id; cur !== undefined && name === null; cur = parent.get(cur)) name = part(byId.get(cur)!.callFrame.url);
  const leaf = byId.get(id)!.callFrame.functionName;
  name ??= leaf.startsWith('(') ? leaf : 'node runtime (not attributed: event loop, microtasks, sockets)';
  byPart.set(name, (byPart.get(name) ?? 0) + us);
}
const pct = (us: number): string => `${((100 * us) / totalUs).toFixed(1).padStart(5)} %`;
console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled`);
console.log('\ntime by part (native work charged to its caller):');
for (const [a, us] of [...byPart].sort((x, y) => y[1] - x[1])) console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${a}`);
console.log('\nself time by area:');
for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1]).slice(0, 30)) console.log(`  ${pct(us)}  ${a}`);
console.log(`\nself time by function (top ${top}):`);
for (const [f, us] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(us)}  ${f}`);
console.log(`\ninclusive time of the project's own functions (top ${top}):`);
for (const [f, us] of [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(us)}  ${f}`);

// The longest busy stretches: runs of samples with no idle one between them. Each is named by
// the project's functions most often on its stack (the caller that kept the thread).
const stretches: { start: number; us: number; ids: number[] }[] = [];
let open: { start: number; us: number; ids: number[] } | null = null;
for (const s of kept) {
  if (byId.get(s.id)!.callFrame.functionName === '(idle)') {
    if (open) stretches.push(open);
    open = null;
    continue;
  }
  open ??= { start: s.at - s.us, us: 0, ids: [] };
  open.us += s.us;
  open.ids.push(s.id);
}
if (open) stretches.push(open);
const seconds = (kept.length ? kept.at(-1)!.at - kept[0]!.at : 0) / 1e6;
const longest = stretches.sort((a, b) => b.us - a.us).slice(0, 15);
console.log(`\nbusy stretches: ${stretches.length} over ${seconds.toFixed(1)} s; over 10 ms: ${stretches.filter((s) => s.us > 10_000).length}; the longest ${longest.length}:`);
for (const s of longest) {
  const counts = new Map<string, number>();
  for (const id of s.ids) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (/\/(src|dist)\//.test(n.callFrame.url) && n.callFrame.functionName) seen.add(frameKey(n));
    }
    for (const k of seen) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const names = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, n]) => `${k} ${Math.round((100 * n) / s.ids.length)}%`);
  console.log(`  ${(s.us / 1000).toFixed(1).padStart(6)} ms at ${s.start}: ${names.join(' · ') || '(no project frame)'}`);
}

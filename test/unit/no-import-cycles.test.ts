// src/ has no import cycles (issue 12: "remove the cycles"). A cycle makes the order in which
// modules initialise depend on which one is loaded first (a `const` read before it is set),
// and it ties files together so that neither can be understood or moved alone.
//
// Every edge counts: static imports, `export … from`, dynamic `import()` (src/main.ts loads
// the commands lazily, and a command importing main back is still a loop), and type-only
// imports. Type-only cycles vanish at run time, but they are the same smell: two files that
// each need the other, where the shared piece belongs in a third.
//
// The folders of src/ are layers too (issue 22: "the arrows between src/ folders all point
// one way"): a folder imports only folders below it, so store/ can be read without config/,
// and time/ without either. LAYERS below is the order; docs/architecture.md explains it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'src');

/**
 * src/ folders from the bottom up. A folder may import only folders on lines above its own;
 * folders on one line are peers and import neither way. The top-level files (app.ts,
 * main.ts, version.ts) count as folders of their own name.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['log', 'time', 'phone-zones', 'stats', 'version'],
  ['store', 'service', 'rules'],
  ['leads', 'results', 'http', 'ha', 'simulator'],
  ['config'],
  ['hooks'],
  ['engine', 'status'],
  ['lifecycle'],
  ['explain'],
  ['dashboard', 'api'],
  ['app'],
  ['cli'],
  ['main'],
];

/** The only folder that may import migrations/, and the only file of it that it may import. */
const MIGRATIONS_USER = 'store';
const MIGRATIONS_ENTRY = 'migrations/index.ts';

/** file (relative to the repository) → the src files it imports, in source order. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!name.endsWith('.ts') || name.endsWith('.d.ts')) continue;
    const file = path.join(dir, name);
    // preProcessFile reads the specifiers the way the compiler does: comments and strings
    // that merely look like imports are not edges; `import type` and `import()` are.
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue; // a package, not our code
      const target = resolve(path.dirname(file), fileName);
      if (target) targets.push(path.relative(ROOT, target));
    }
    graph.set(path.relative(ROOT, file), targets);
  }
  return graph;
}

/** './x.js' → x.ts (NodeNext: sources import the emitted name), or x/index.ts. */
function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(from, specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * One cycle per strongly connected component of more than one file (or a file importing
 * itself), written as the import path that closes it: a → b → … → a.
 */
function findCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm: every cycle lies inside one strongly connected component.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components.map((component) => shortestLoop(graph, new Set(component)));
}

/** The shortest path from the component's first file (alphabetically) back to itself. */
function shortestLoop(graph: Map<string, string[]>, component: Set<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!component.has(to)) continue;
      if (to === start) {
        const loop = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = cameFrom.get(at)) loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/** 'src/store/x.ts' → 'store'; 'src/app.ts' → 'app'; 'migrations/0008_ha_lease.ts' → 'migrations'. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
}

/** One line per file import that crosses folders against LAYERS (or into a migration). */
function layerViolations(graph: Map<string, string[]>, layers: readonly (readonly string[])[]): string[] {
  const rank = new Map<string, number>();
  layers.forEach((line, i) => line.forEach((folder) => rank.set(folder, i)));
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      if (to === 'migrations') {
        if (from !== MIGRATIONS_USER || target !== MIGRATIONS_ENTRY) problems.push(`${file} → ${target}: only ${MIGRATIONS_USER}/ imports migrations, through ${MIGRATIONS_ENTRY} (migrations are frozen: keep a live copy of a constant in src/)`);
        continue;
      }
      const a = rank.get(from);
      const b = rank.get(to);
      if (a === undefined || b === undefined) problems.push(`${file} → ${target}: folder ${a === undefined ? from : to} is not in LAYERS (add it on the line where it belongs)`);
      else if (b >= a) problems.push(`${file} → ${target}: ${from}/ may not import ${to}/ (${b === a ? 'peers' : `${to}/ is above ${from}/`}; move the shared piece down or pass plain values)`);
    }
  }
  return problems;
}

/** folder → the folders its files import (other than itself). */
function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    folders.set(from, set);
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
  }
  return new Map([...folders].map(([folder, set]) => [folder, [...set].sort()]));
}

describe('import cycles', () => {
  it('finds a cycle in a graph that has one, and names it', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(findCycles(graph)).toEqual(expect.arrayContaining([['a.ts', 'b.ts', 'c.ts', 'a.ts'], ['e.ts', 'e.ts']]));
    expect(findCycles(graph)).toHaveLength(2);
    expect(findCycles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('src/ has none (type-only and dynamic imports included)', () => {
    const graph = importGraph(SRC);
    expect(graph.size).toBeGreaterThan(50); // the scan found the sources
    const cycles = findCycles(graph).map((loop) => loop.join(' → '));
    expect(cycles, `import cycles in src/ (move the shared piece to a file both can import):\n${cycles.join('\n')}`).toEqual([]);
  });

  it('finds a folder that imports one above it, a peer, or a migration', () => {
    const layers = [['low'], ['mid', 'peer'], ['top']];
    const graph = new Map([
      ['src/low/a.ts', ['src/mid/b.ts']],
      ['src/mid/b.ts', ['src/low/a.ts', 'src/peer/c.ts', 'src/mid/d.ts']],
      ['src/top.ts', ['src/mid/b.ts', 'migrations/0001_x.ts', 'src/odd/e.ts']],
    ]);
    expect(layerViolations(graph, layers)).toEqual([
      expect.stringContaining('src/low/a.ts → src/mid/b.ts: low/ may not import mid/ (mid/ is above low/'),
      expect.stringContaining('src/mid/b.ts → src/peer/c.ts: mid/ may not import peer/ (peers'),
      expect.stringContaining('src/top.ts → migrations/0001_x.ts: only store/ imports migrations'),
      expect.stringContaining('folder odd is not in LAYERS'),
    ]);
    expect(findCycles(folderGraph(graph))).toEqual([['low', 'mid', 'low']]);
  });

  it('src/ folders import only the folders below them (LAYERS), and form no cycle', () => {
    const graph = importGraph(SRC);
    const listed = LAYERS.flat();
    expect(new Set(listed).size, 'a folder is listed twice in LAYERS').toBe(listed.length);
    const violations = layerViolations(graph, LAYERS);
    expect(violations, `imports against the layer order:\n${violations.join('\n')}`).toEqual([]);
    const cycles = findCycles(folderGraph(graph)).map((loop) => loop.join(' → '));
    expect(cycles, `cycles between src/ folders:\n${cycles.join('\n')}`).toEqual([]);
  });

  it('docs/architecture.md lists the same layers', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const block = /```layers\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    // The doc lists them top first, one line per layer: "name/ name/ …  # why".
    const lines = block.split('\n').map((line) => line.split('#', 1)[0]!.trim()).filter((line) => line !== '');
    const documented = lines.map((line) => line.split(/\s+/).map((word) => word.replace(/(\/|\.ts)$/, ''))).reverse();
    expect(documented).toEqual(LAYERS);
  });
});

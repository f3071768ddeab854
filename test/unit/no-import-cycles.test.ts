// src/ has no import cycles (issue 12: "remove the cycles"). A cycle makes the order in which
// modules initialise depend on which one is loaded first (a `const` read before it is set),
// and it ties files together so that neither can be understood or moved alone.
//
// Every edge counts: static imports, `export … from`, dynamic `import()` (src/main.ts loads
// the commands lazily, and a command importing main back is still a loop), and type-only
// imports. Type-only cycles vanish at run time, but they are the same smell: two files that
// each need the other, where the shared piece belongs in a third.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'src');

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
});

// `npx tsx bench/heap-summary.ts FILE.heapsnapshot [TOP]`: a V8 heap snapshot summed by
// constructor (self size and count), largest first; with two files, the growth from the
// first to the second. What bench/accounts.ts --heap-snapshot writes is read here to see
// which objects grow with the number of accounts.
import fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per "type:name" (objects by constructor, strings, code, arrays…). */
function summarize(file: string): Map<string, { size: number; count: number }> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const sums = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!]!;
    // Strings and code are summed by type: their names are their contents.
    const name = type === 'object' || type === 'closure' || type === 'native' ? snap.strings[snap.nodes[i + nameAt]!]! : '';
    const key = `${type}:${name.slice(0, 80)}`;
    const sum = sums.get(key) ?? { size: 0, count: 0 };
    sum.size += snap.nodes[i + sizeAt]!;
    sum.count += 1;
    sums.set(key, sum);
  }
  return sums;
}

const [first, second] = process.argv.slice(2).filter((a) => a.endsWith('.heapsnapshot'));
const top = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 40);
if (!first) throw new Error('usage: npx tsx bench/heap-summary.ts FILE.heapsnapshot [SECOND.heapsnapshot] [TOP]');
const a = summarize(first);
const b = second ? summarize(second) : null;
const rows = [...(b ?? a)].map(([key, v]) => ({ key, size: v.size - (b ? (a.get(key)?.size ?? 0) : 0), count: v.count - (b ? (a.get(key)?.count ?? 0) : 0) }));
rows.sort((x, y) => y.size - x.size);
const total = rows.reduce((n, r) => n + r.size, 0);
console.log(`${b ? 'growth' : 'total'}: ${(total / 1e6).toFixed(1)} MB`);
for (const r of rows.slice(0, top)) console.log(`${(r.size / 1e6).toFixed(2).padStart(8)} MB ${String(r.count).padStart(9)}  ${r.key}`);

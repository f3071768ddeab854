// `npx tsx bench/window.ts`: cost of the calling-window functions, which the engine calls
// per claim (isOpen) and per tick (nextOpening). Targets: isOpen ≪ 10 µs, nextOpening ≪ 100 µs.
// Prints mean and p99 per call over instants spread through a year, per kind of window,
// plus the worst case (a window that never opens: the full 400-day walk), and the first
// (cold) call per zone, which builds that zone's offset timeline.
import { performance } from 'node:perf_hooks';
import type { Weekday } from '../src/config/types.js';
import { isOpen, nextOpening, nextOpeningAll, type WindowSpec } from '../src/time/window.js';

const h = (hh: number, mm = 0): number => hh * 3600 + mm * 60;
const ZONES = ['Europe/Berlin', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Kiritimati'];
const KINDS: { label: string; w: Omit<WindowSpec, 'timezone'> }[] = [
  { label: 'weekdays 09–18', w: { days: [1, 2, 3, 4, 5], start: h(9), end: h(18) } },
  { label: 'Fri+Sat 22–02', w: { days: [5, 6], start: h(22), end: h(2) } },
  { label: 'whole Tue, blackouts', w: { days: [2], start: 0, end: 0, blackoutDates: ['2026-03-03', '2026-03-10', '2026-12-22'] } },
];
const FROM = Date.UTC(2026, 0, 1);
const YEAR = 365 * 86_400_000;
const N = 200_000;

function instants(n: number): number[] {
  // A fixed pseudo-random spread (LCG), so runs are comparable.
  let x = 12345;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    out.push(FROM + Math.floor((x / 2_147_483_648) * YEAR));
  }
  return out;
}

/** Mean and p99 in µs of `fn` over `ts`, timed in batches of 100 calls. */
function measure(ts: number[], fn: (t: number) => unknown): { mean: number; p99: number } {
  for (let i = 0; i < 20_000; i++) fn(ts[i % ts.length] as number); // warm-up
  const batch = 100;
  const per: number[] = [];
  let sink = 0;
  for (let i = 0; i + batch <= ts.length; i += batch) {
    const t0 = performance.now();
    for (let j = i; j < i + batch; j++) if (fn(ts[j] as number)) sink++;
    per.push(((performance.now() - t0) * 1000) / batch);
  }
  if (sink < 0) console.log(sink);
  per.sort((a, b) => a - b);
  const mean = per.reduce((a, b) => a + b, 0) / per.length;
  return { mean, p99: per[Math.floor(per.length * 0.99)] as number };
}

const fmt = (v: number): string => v.toFixed(3).padStart(8);
const ts = instants(N);

console.log('cold first call per zone (builds the offset timeline):');
for (const zone of ZONES) {
  const t0 = performance.now();
  isOpen({ timezone: zone, days: [1], start: 0, end: 1 }, FROM);
  console.log(`  ${zone.padEnd(22)} ${((performance.now() - t0) * 1000).toFixed(0).padStart(6)} µs`);
}

console.log(`\nper call over ${N} instants in 2026 (µs; p99 of 100-call batches):`);
console.log(`  ${'zone'.padEnd(22)} ${'window'.padEnd(22)}   isOpen mean/p99      nextOpening mean/p99`);
for (const zone of ZONES) {
  for (const { label, w } of KINDS) {
    const spec: WindowSpec = { timezone: zone, ...w };
    const a = measure(ts, (t) => isOpen(spec, t));
    const b = measure(ts, (t) => nextOpening(spec, t));
    console.log(`  ${zone.padEnd(22)} ${label.padEnd(22)} ${fmt(a.mean)} ${fmt(a.p99)}    ${fmt(b.mean)} ${fmt(b.p99)}`);
  }
}

const lead = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5, 6, 7] as Weekday[], start: h(8), end: h(21) };
const camp = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5] as Weekday[], start: h(9), end: h(18) };
const joint = measure(ts.slice(0, 50_000), (t) => nextOpeningAll([camp, lead], t));
console.log(`\nnextOpeningAll (Berlin campaign + New York lead hours): mean ${fmt(joint.mean)} µs, p99 ${fmt(joint.p99)} µs`);

const never: WindowSpec = { timezone: 'Europe/Berlin', days: [], start: h(9), end: h(18) };
const worst = measure(ts.slice(0, 2_000), (t) => nextOpening(never, t));
console.log(`worst case, never opens (400-day walk): mean ${fmt(worst.mean)} µs, p99 ${fmt(worst.p99)} µs`);

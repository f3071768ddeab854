// `npx tsx bench/engine-calls.ts [--quick]`: the engine against the simulator with
// 10 parallel 60-second calls on a sped-up clock shared by both, once with webhooks and
// once with polling only. Prints:
//  - API efficiency: HTTP requests per placed call (goals ≤ 1.05 with webhooks, ≤ 1.5 polling only);
//  - utilization: time-weighted live calls ÷ limit while due leads exist (goal ≥ 98 %, webhooks);
//  - slot refill: webhook arrival → next claim, p50/p99 in real ms (goal p99 ≤ 50 ms).
import { performance } from 'node:perf_hooks';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { attemptSpans, refillDelays, utilization } from './lib/call-metrics.js';
import { startBenchStack, waitForDone } from './lib/engine-stack.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'engine-calls';
const quick = isQuick();
const LEADS = quick ? 80 : 300;
const LIMIT = 10;
// 100 simulated ms per real ms: a 60 s call lasts 0.6 s, and a real millisecond of
// engine work is still visible (0.01 real ms resolution).
const SCALE = 100;

async function run(webhooks: boolean): Promise<void> {
  const stack = await startBenchStack({
    scale: SCALE,
    webhooks,
    campaigns: [{ leads: LEADS, settings: { maxCallsInParallel: LIMIT } }],
    outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
    callDurationSeconds: { min: 60, max: 60 },
  });
  try {
    const label = webhooks ? 'webhooks' : 'polling only';
    const t0 = performance.now();
    await stack.startEngine();
    await waitForDone(stack.db, 3 * 60_000);
    const seconds = (performance.now() - t0) / 1000;
    const placed = stack.sim.state.calls.size;
    const total = [...stack.requests.values()].reduce((a, b) => a + b, 0);
    const byEndpoint = [...stack.requests.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`${label}: ${LEADS} leads, ${placed} calls placed in ${fmt(seconds, 1)} s real (${fmt((seconds * SCALE) / 60, 1)} simulated min); requests: ${byEndpoint}`);
    reportFigure(BENCH, `requests per placed call, ${label}`, total / placed, '', atMost(webhooks ? 1.05 : 1.5, ''), `${total} requests / ${placed} calls`);

    const spans = await attemptSpans(stack.db);
    const util = utilization(spans, LIMIT) * 100;
    reportFigure(BENCH, `utilization, ${label}`, util, '%', webhooks ? atLeast(98, '%') : undefined, `limit ${LIMIT}, ${spans.length} attempts`);
    if (webhooks) {
      // Simulated ms ÷ scale = real ms: the engine's reaction time as a person would see it.
      const delays = refillDelays(
        stack.webhookArrivals,
        spans.filter((s) => s.outcomeSource === 'webhook' && s.endedAt !== null).map((s) => s.endedAt as number),
        spans.map((s) => s.createdAt),
      ).map((d) => d / SCALE);
      const s = summary(delays);
      console.log(`  slot refill after a webhook: n ${s.n}, p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, max ${fmt(s.max)} ms (real time)`);
      reportFigure(BENCH, 'slot refill after webhook p99', s.p99, 'ms', atMost(50, 'ms'), `n ${s.n}, p50 ${fmt(s.p50)} ms`);
    }
  } finally {
    await stack.close();
  }
}

console.log(`${BENCH}: 1 campaign, ${LEADS} leads, ${LIMIT} parallel 60 s calls, clock ×${SCALE}${quick ? ' (quick)' : ''}`);
await run(true);
await run(false);

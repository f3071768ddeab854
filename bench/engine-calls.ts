// `npx tsx bench/engine-calls.ts [--quick]`: the engine against the simulator with
// 10 parallel 60-second calls on a sped-up clock shared by both, once with webhooks and
// once with polling only. Prints:
//  - API efficiency: HTTP requests per placed call (goals ≤ 1.05 with webhooks, ≤ 1.5 polling only);
//  - utilization: time-weighted live calls ÷ limit while due leads exist, from the
//    simulator's call timelines (goal ≥ 98 %, webhooks, at ×10);
//  - slot refill: webhook arrival → next claim, p50/p99 in real ms (goal p99 ≤ 50 ms).
import { performance } from 'node:perf_hooks';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { attemptSpans, refillDelays, utilization } from './lib/call-metrics.js';
import { startBenchStack, waitForDone } from './lib/engine-stack.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'engine-calls';
const quick = isQuick();
const LIMIT = 10;

/**
 * One campaign of `leads` leads on a clock `scale` times real time. Request counts do not
 * depend on the speed-up, so the API-efficiency runs go at ×100 (a 60 s call lasts 0.6 s).
 * Utilization does: every real millisecond the engine and the HTTP round trips take is
 * `scale` simulated ms of idle slot, so it is measured at ×10, closer to real time.
 */
async function run(webhooks: boolean, SCALE: number, LEADS: number, measureSlots: boolean): Promise<void> {
  const stack = await startBenchStack({
    scale: SCALE,
    webhooks,
    campaigns: [{ leads: LEADS, settings: { maxCallsInParallel: LIMIT } }],
    outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
    callDurationSeconds: { min: 60, max: 60 },
  });
  try {
    const label = `${webhooks ? 'webhooks' : 'polling only'}, ×${SCALE}`;
    const t0 = performance.now();
    await stack.startEngine();
    await waitForDone(stack.db, 3 * 60_000);
    const seconds = (performance.now() - t0) / 1000;
    const placed = stack.sim.state.calls.size;
    const total = [...stack.requests.values()].reduce((a, b) => a + b, 0);
    const byEndpoint = [...stack.requests.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`${label}: ${LEADS} leads, ${placed} calls placed in ${fmt(seconds, 1)} s real (${fmt((seconds * SCALE) / 60, 1)} simulated min); requests: ${byEndpoint}`);
    if (!measureSlots) {
      reportFigure(BENCH, `requests per placed call, ${label}`, total / placed, '', atMost(webhooks ? 1.05 : 1.5, ''), `${total} requests / ${placed} calls`);
      return;
    }

    // Utilization as the service sees it: the simulator's own call timelines (created →
    // finished), so the time until the engine learns of an end counts as an idle slot.
    const simSpans = [...stack.sim.state.calls.values()].map((c) => ({ campaignId: 0, leadId: 0, createdAt: c.createdAt, endedAt: c.finishedAt, outcomeSource: null, callId: null }));
    reportFigure(BENCH, `utilization (service side), ${label}`, utilization(simSpans, LIMIT) * 100, '%', webhooks ? atLeast(98, '%') : undefined, `limit ${LIMIT}; simulator call timelines`);
    // The engine's view (claim → end recorded) counts a slot busy until it learns of the end.
    const spans = await attemptSpans(stack.db);
    reportFigure(BENCH, `utilization (engine side), ${label}`, utilization(spans, LIMIT) * 100, '%', undefined, 'claim → end recorded');
    if (webhooks) {
      // Simulated ms ÷ scale = real ms: the engine's reaction time as a person would see it.
      const delays = refillDelays(spans, stack.webhookAppliedAt).map((d) => d / SCALE);
      const s = summary(delays);
      console.log(`  slot refill after a webhook: n ${s.n}, p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, max ${fmt(s.max)} ms (real time)`);
      reportFigure(BENCH, 'slot refill after webhook p99', s.p99, 'ms', atMost(50, 'ms'), `n ${s.n}, p50 ${fmt(s.p50)} ms`);
    }
  } finally {
    await stack.close();
  }
}

console.log(`${BENCH}: 1 campaign, ${LIMIT} parallel 60 s calls${quick ? ' (quick)' : ''}`);
await run(true, 100, quick ? 80 : 300, false);
await run(false, 100, quick ? 80 : 300, false);
await run(true, 10, quick ? 30 : 60, true);

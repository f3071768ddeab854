// `npx tsx bench/engine-calls.ts [--quick]`: the engine against the simulator with
// 10 parallel calls on a sped-up clock shared by both. Prints:
//  - with webhooks (60 s calls): HTTP requests per placed call (goal ≤ 1.05), utilization
//    (goal ≥ 98 % at ×10) and slot refill after a webhook (p99 ≤ 50 ms real);
//  - polling only, the client's default budget (100 requests/min, 20 per 10 s), for 60 s
//    and 15 s calls: utilization while due leads wait (goals ≥ 90 % and ≥ 85 %) and
//    requests per placed call (goal ≤ 1.5), both from the same run.
// Utilization is the time-weighted live calls ÷ limit from the simulator's call
// timelines: the time until the engine learns of an end counts as an idle slot.
// `--dialect postgres`: the same runs on a PostgreSQL store (issue 12: a slot freed by a
// webhook is refilled as fast as on SQLite).
import { performance } from 'node:perf_hooks';
import { benchDialect, dialectLabel } from './lib/bench-db.js';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { attemptSpans, refillDelays, utilization } from './lib/call-metrics.js';
import { startBenchStack, waitForDone } from './lib/engine-stack.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'engine-calls';
const quick = isQuick();
const dialect = benchDialect();
const LIMIT = 10;

interface RunSpec {
  webhooks: boolean;
  scale: number;
  leads: number;
  talkSeconds: number;
  /** Figures to print: request cost only, or slots too. */
  measureSlots: boolean;
  /** The client's rate budget; the default budget of campaignd when set, else one too high to matter. */
  defaultBudget?: boolean;
  utilizationGoal?: number;
}

/**
 * One campaign of `leads` leads on a clock `scale` times real time. Request counts do not
 * depend on the speed-up, so the webhook API-efficiency run goes at ×100 (a 60 s call lasts 0.6 s).
 * Utilization does: every real millisecond the engine and the HTTP round trips take is
 * `scale` simulated ms of idle slot, so it is measured at ×10, closer to real time.
 */
async function run(spec: RunSpec): Promise<void> {
  const { webhooks, scale: SCALE, leads: LEADS } = spec;
  const stack = await startBenchStack({
    scale: SCALE,
    webhooks,
    campaigns: [{ leads: LEADS, settings: { maxCallsInParallel: LIMIT } }],
    outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
    callDurationSeconds: { min: spec.talkSeconds, max: spec.talkSeconds },
    ...(spec.defaultBudget ? { rateLimit: { requestsPerMinute: 100, burst: 20 } } : {}),
    dialect,
  });
  try {
    const label = `${webhooks ? 'webhooks' : 'polling only'}, ${spec.talkSeconds} s calls, ×${SCALE}`;
    const t0 = performance.now();
    await stack.startEngine();
    await waitForDone(stack.db, 5 * 60_000);
    const seconds = (performance.now() - t0) / 1000;
    const placed = stack.sim.state.calls.size;
    const total = [...stack.requests.values()].reduce((a, b) => a + b, 0);
    const byEndpoint = [...stack.requests.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`${label}: ${LEADS} leads, ${placed} calls placed in ${fmt(seconds, 1)} s real (${fmt((seconds * SCALE) / 60, 1)} simulated min); requests: ${byEndpoint}`);
    const budget = spec.defaultBudget ? '100/min budget' : 'unbounded budget';
    if (!webhooks || !spec.measureSlots) {
      reportFigure(BENCH, `requests per placed call, ${label}`, total / placed, '', atMost(webhooks ? 1.05 : 1.5, ''), `${total} requests / ${placed} calls, ${budget}`);
    }
    if (!spec.measureSlots) return;

    // Utilization as the service sees it: the simulator's own call timelines (created →
    // finished), so the time until the engine learns of an end counts as an idle slot.
    const simSpans = [...stack.sim.state.calls.values()].map((c) => ({ campaignId: 0, leadId: 0, createdAt: c.createdAt, endedAt: c.finishedAt, outcomeSource: null, callId: null }));
    const goal = spec.utilizationGoal;
    reportFigure(BENCH, `utilization (service side), ${label}`, utilization(simSpans, LIMIT) * 100, '%', goal !== undefined ? atLeast(goal, '%') : undefined, `limit ${LIMIT}; simulator call timelines; ${budget}`);
    // The engine's view (claim → end recorded) counts a slot busy until it learns of the end.
    const spans = await attemptSpans(stack.db);
    reportFigure(BENCH, `utilization (engine side), ${label}`, utilization(spans, LIMIT) * 100, '%', undefined, 'claim → end recorded');
    if (webhooks) {
      // Simulated ms ÷ scale = real ms: the engine's reaction time as a person would see it.
      const delays = refillDelays(spans, stack.webhookAppliedAt, LIMIT).map((d) => d / SCALE);
      const s = summary(delays);
      console.log(`  slot refill after a webhook: n ${s.n}, p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms, max ${fmt(s.max)} ms (real time)`);
      reportFigure(BENCH, 'slot refill after webhook p99', s.p99, 'ms', atMost(50, 'ms'), `n ${s.n}, p50 ${fmt(s.p50)} ms`);
    }
  } finally {
    await stack.close();
  }
}

console.log(`${BENCH}: 1 campaign, ${LIMIT} parallel calls, ${dialectLabel(dialect)}${quick ? ' (quick)' : ''}`);
await run({ webhooks: true, scale: 100, leads: quick ? 80 : 300, talkSeconds: 60, measureSlots: false });
await run({ webhooks: true, scale: 10, leads: quick ? 30 : 60, talkSeconds: 60, measureSlots: true, utilizationGoal: 98 });
// Polling only: the default budget, due leads waiting all along (utilization is measured
// up to the last claim); request cost and slots from the same run.
await run({ webhooks: false, scale: 10, leads: quick ? 80 : 150, talkSeconds: 60, measureSlots: true, defaultBudget: true, utilizationGoal: 90 });
await run({ webhooks: false, scale: 10, leads: quick ? 150 : 300, talkSeconds: 15, measureSlots: true, defaultBudget: true, utilizationGoal: 85 });

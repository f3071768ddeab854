// `npx tsx bench/engine-retries.ts [--quick]`: retry punctuality. Every call is busy, so
// each lead gets 1 + max_retries attempts retry_interval apart; the live-call limit is
// above the lead count, so a retry never waits for a slot. Prints the retry timing error:
// claim of the next attempt − (previous attempt's end as the engine recorded it +
// retry_interval), in real ms (simulated ms ÷ the clock's speed-up). Reported, no goal.
import { performance } from 'node:perf_hooks';
import { isQuick, reportFigure } from './lib/figures.js';
import { attemptSpans, retryErrors } from './lib/call-metrics.js';
import { startBenchStack, waitForDone } from './lib/engine-stack.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'engine-retries';
const quick = isQuick();
const LEADS = quick ? 20 : 40;
const RETRY_SECONDS = 60;
const SCALE = 20;

const stack = await startBenchStack({
  scale: SCALE,
  webhooks: true,
  campaigns: [{ leads: LEADS, settings: { maxCallsInParallel: LEADS + 10, maxRetries: 2, retryIntervalSeconds: RETRY_SECONDS, retryOn: ['busy'] } }],
  outcomes: { human: 0, voicemail: 0, busy: 1, 'no-answer': 0, failed: 0 },
  callDurationSeconds: { min: 1, max: 1 },
});
try {
  console.log(`${BENCH}: ${LEADS} leads, all busy, 2 retries ${RETRY_SECONDS} s apart, clock ×${SCALE}${quick ? ' (quick)' : ''}`);
  const t0 = performance.now();
  await stack.startEngine();
  await waitForDone(stack.db, quick ? 30_000 : 60_000);
  const spans = await attemptSpans(stack.db);
  const errors = retryErrors(spans, RETRY_SECONDS * 1000).map((ms) => ms / SCALE);
  const s = summary(errors);
  console.log(`  ${spans.length} attempts in ${fmt((performance.now() - t0) / 1000, 1)} s; retry error (real ms): p50 ${fmt(s.p50)}, p99 ${fmt(s.p99)}, max ${fmt(s.max)}, min ${fmt(Math.min(...errors))}`);
  if (spans.length !== LEADS * 3) throw new Error(`expected ${LEADS * 3} attempts, found ${spans.length}`);
  reportFigure(BENCH, 'retry timing error p50', s.p50, 'ms', undefined, `n ${s.n}`);
  reportFigure(BENCH, 'retry timing error p99', s.p99, 'ms', undefined, `n ${s.n}, min ${fmt(Math.min(...errors))} ms`);
} finally {
  await stack.close();
}

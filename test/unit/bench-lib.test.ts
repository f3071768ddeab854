import { describe, expect, it } from 'vitest';
import { refillDelays, retryErrors, utilization, type AttemptSpan } from '../../bench/lib/call-metrics.js';
import { atLeast, atMost, FIGURE_PREFIX, parseFigures } from '../../bench/lib/figures.js';
import { importFigures, statusFigures, windowFigures } from '../../bench/lib/other-benches.js';
import { accountOfNumber } from '../../bench/lib/accounts-workspace.js';
import { requestsBetween, slotUtilization } from '../../bench/lib/service-record.js';
import { percentile, summary } from '../../bench/lib/stats.js';
import { markdownTable } from '../../bench/lib/table.js';

const span = (createdAt: number, endedAt: number | null, extra: Partial<AttemptSpan> = {}): AttemptSpan => ({
  campaignId: 1,
  leadId: 1,
  createdAt,
  endedAt,
  outcomeSource: 'webhook',
  callId: null,
  ...extra,
});

describe('bench statistics', () => {
  it('percentile uses the nearest rank and does not reorder its input', () => {
    const values = [5, 1, 4, 2, 3];
    expect(percentile(values, 0.5)).toBe(3);
    expect(percentile(values, 0.99)).toBe(5);
    expect(percentile(values, 0)).toBe(1);
    expect(values).toEqual([5, 1, 4, 2, 3]);
    expect(Number.isNaN(percentile([], 0.5))).toBe(true);
    expect(summary(Array.from({ length: 100 }, (_, i) => i + 1))).toEqual({ n: 100, p50: 50, p99: 99, max: 100 });
  });
});

describe('utilization', () => {
  it('is busy slot time over limit × the span from first to last claim', () => {
    // Two slots; one call lives the whole span, the other half of it.
    const spans = [span(0, 100), span(0, 50), span(100, 200)];
    expect(utilization(spans, 2)).toBeCloseTo(150 / 200);
  });
  it('counts a call not yet ended as live until the last claim', () => {
    expect(utilization([span(0, null), span(10, null)], 1)).toBeCloseTo(1.0);
  });
});

describe('the accounts bench, from the service record', () => {
  it('slot utilization is live call time inside the window over slots × window, a call not ended live to the end', () => {
    const calls = [
      { phone_number: '+15552000000', placed_at_ms: 0, ended_at_ms: 150 }, // 100..150 inside
      { phone_number: '+15552000001', placed_at_ms: 120, ended_at_ms: null }, // 120..200
      { phone_number: '+15552000002', placed_at_ms: 300, ended_at_ms: 400 }, // outside
    ];
    expect(slotUtilization(calls, 2, 100, 200)).toBeCloseTo((50 + 80) / 200);
    expect(Number.isNaN(slotUtilization(calls, 2, 200, 200))).toBe(true);
  });
  it('requests between two snapshots are allowed + refused, per token; a number names its account', () => {
    const before = [{ user_index: 0, allowed: 10, refused: 1, trips: 1 }];
    const after = [
      { user_index: 0, allowed: 25, refused: 3, trips: 2 },
      { user_index: 1, allowed: 4, refused: 0, trips: 0 },
    ];
    expect([...requestsBetween(before, after)]).toEqual([
      [0, { requests: 17, refused: 2, trips: 1 }],
      [1, { requests: 4, refused: 0, trips: 0 }],
    ]);
    expect([accountOfNumber('+15552000009'), accountOfNumber('+15552010000'), accountOfNumber('+15551999999')]).toEqual([0, 1, -1]);
  });
});

describe('refill delays', () => {
  it('pairs the k-th slot freed with claim limit + k, from the webhook arrival, skipping poll-closed calls', () => {
    const spans = [
      span(0, 105, { callId: 'a' }), // webhook at 100, recorded at 105
      span(0, 110, { callId: 'b' }), // webhook at 108
      span(0, 130, { callId: 'c' }), // closed by a poll before its webhook came (at 140)
      span(107, null),
      span(112, null),
      span(131, null),
    ];
    const arrivals = new Map([
      ['a', 100],
      ['b', 108],
      ['c', 140],
    ]);
    expect(refillDelays(spans, arrivals, 3)).toEqual([7, 4]);
  });
  it('counts a claim stamped before the end it refills was recorded (a store a network away)', () => {
    // Webhooks at 100 and 101; the pass that refills both began at 110, while the second
    // end waited for the connection and was recorded at 125.
    const spans = [span(0, 105, { callId: 'a' }), span(0, 125, { callId: 'b' }), span(110, null), span(110, null)];
    const arrivals = new Map([
      ['a', 100],
      ['b', 101],
    ]);
    expect(refillDelays(spans, arrivals, 2)).toEqual([10, 9]);
  });
});

describe('retry errors', () => {
  it('is the next claim minus (previous end + interval), per lead', () => {
    const spans = [span(0, 10, { leadId: 1 }), span(0, 20, { leadId: 2 }), span(75, 80, { leadId: 1 }), span(80, null, { leadId: 2 })];
    expect(retryErrors(spans, 60).sort((a, b) => a - b)).toEqual([0, 5]);
  });
});

describe('figures and tables', () => {
  it('goals judge values and parseFigures reads only the machine lines', () => {
    expect(atMost(5, 'ms').test(5)).toBe(true);
    expect(atMost(5, 'ms').test(Number.NaN)).toBe(false);
    expect(atLeast(0.5, '').test(0.4)).toBe(false);
    const line = FIGURE_PREFIX + JSON.stringify({ bench: 'b', name: 'n', value: 1, unit: 'ms', goal: '', pass: null });
    expect(parseFigures(`hello\n${line}\n${FIGURE_PREFIX}{broken\n`)).toEqual([{ bench: 'b', name: 'n', value: 1, unit: 'ms', goal: '', pass: null }]);
  });
  it('markdownTable pads columns', () => {
    expect(markdownTable(['a', 'bb'], [['xyz', '1']]).split('\n')).toEqual(['| a   | bb |', '| --- | -- |', '| xyz | 1  |']);
  });
  it('reads the figures of the benchmarks that print readable lines', () => {
    const imp = importFigures('import     1,000,000 rows in 12.50 s = 80,000 rows/s\nre-import  1,000,000 rows in 40.00 s = 25,000 rows/s\nin-process peak RSS 250 MB (this benchmark under tsx: import and re-import); database 300 MB\n');
    expect(imp.map((f) => [f.value, f.pass])).toEqual([
      [80_000, true],
      [25_000, false],
      [250, null],
    ]);
    const status = statusFigures('built 1,000,000 leads, 600,000 attempts\ncollectStatus, all 5 campaigns: median 120 ms, p90 150 ms, max 400 ms (target ≤ 300 ms)');
    expect(status[0]?.value).toBe(120);
    expect(windowFigures('nextOpeningAll (x): mean    0.339 µs, p99    0.444 µs')[0]?.value).toBeCloseTo(0.444);
  });
});

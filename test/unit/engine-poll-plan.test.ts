// The poll plan (src/engine/poll-plan.ts): when to read the call list without webhooks.
// Pure, so it is driven here with made-up calls and durations; a small model of a
// campaign (slots refilled at each listing) checks the trade-off it was built for.
import { describe, expect, it } from 'vitest';
import { durationCdf, endedBy, MAX_SAMPLES, MIN_SAMPLES, nextPollAt, recordSample, refineDurations, type DurationSample, type LiveCall, type PollPlanInput } from '../../src/engine/poll-plan.js';

const S = 1_000;

function plan(over: Partial<PollPlanInput> & { live: LiveCall[] }): number {
  return nextPollAt({
    now: 0,
    lastPollAt: 0,
    samples: () => [],
    pollsPerCall: 0.45,
    minGapMs: 1 * S,
    maxGapMs: 60 * S,
    learningGapMs: 10 * S,
    ...over,
  });
}

/** Samples of calls that lasted exactly `d` ms (seen ended 0.5 s after their end). */
function exact(d: number, n = 10): DurationSample[] {
  return Array.from({ length: n }, () => ({ lo: d - 500, hi: d }));
}

describe('duration estimate', () => {
  it('spreads each end evenly over the interval between the two listings that bracket it', () => {
    const samples = [{ lo: 10 * S, hi: 20 * S }, { lo: 30 * S, hi: 30 * S }];
    expect(durationCdf(samples, 5 * S)).toBe(0);
    expect(durationCdf(samples, 15 * S)).toBeCloseTo(0.25);
    expect(durationCdf(samples, 25 * S)).toBeCloseTo(0.5);
    expect(durationCdf(samples, 30 * S)).toBe(1);
  });

  it('conditions on what is known: a call still live after 15 s of 10–20 s calls has an even chance of ending by 17.5 s', () => {
    const samples = [{ lo: 10 * S, hi: 20 * S }];
    expect(endedBy(samples, 15 * S, 17.5 * S)).toBeCloseTo(0.5);
    expect(endedBy(samples, 15 * S, 15 * S)).toBe(0);
  });

  it('a call longer than every call seen is expected to end later the longer it has lasted (no storm of listings)', () => {
    const samples = exact(20 * S);
    const young = endedBy(samples, 30 * S, 32 * S);
    const old = endedBy(samples, 600 * S, 602 * S);
    expect(young).toBeGreaterThan(old);
    expect(old).toBeGreaterThan(0);
  });

  it('places the end of a wide interval where the narrow ones say calls end', () => {
    // Nine calls seen ending between 60 and 61 s; one somewhere between 20 and 70 s.
    const samples = [...Array.from({ length: 9 }, () => ({ lo: 60 * S, hi: 61 * S })), { lo: 20 * S, hi: 70 * S }];
    const plain = durationCdf(samples, 50 * S);
    const refined = durationCdf(refineDurations(samples), 50 * S);
    expect(plain).toBeCloseTo(0.06, 2);
    expect(refined).toBeLessThan(0.01);
    expect(durationCdf(refineDurations(samples), 61.5 * S)).toBeGreaterThan(0.95);
  });

  it('keeps the newest samples only', () => {
    const samples: DurationSample[] = [];
    for (let i = 0; i < MAX_SAMPLES + 5; i++) recordSample(samples, { lo: i, hi: i + 1 });
    expect(samples).toHaveLength(MAX_SAMPLES);
    expect(samples[0]).toEqual({ lo: 5, hi: 6 });
    recordSample(samples, { lo: 5, hi: 1 });
    expect(samples).toHaveLength(MAX_SAMPLES);
  });
});

describe('nextPollAt', () => {
  it('does not poll when no call is live', () => {
    expect(plan({ live: [] })).toBe(Number.POSITIVE_INFINITY);
  });

  it('polls at the learning cadence while durations are unknown', () => {
    const live = [{ assistantId: 1, sentAt: 0, aliveAt: 0 }];
    expect(plan({ live, samples: () => exact(60 * S, MIN_SAMPLES - 1) })).toBe(10 * S);
  });

  it('does not poll while nothing can have ended, and polls soon after calls of a known length end', () => {
    const live = Array.from({ length: 10 }, () => ({ assistantId: 1, sentAt: 0, aliveAt: 0 }));
    const at = plan({ live, samples: () => exact(60 * S) });
    expect(at).toBeGreaterThanOrEqual(59.5 * S);
    expect(at).toBeLessThan(62 * S);
  });

  it('with one call live, lists once it has most probably ended; with many, as soon as a batch has', () => {
    const samples = () => exact(60 * S).map((s, i) => ({ lo: s.lo + i * S, hi: s.hi + i * S }));
    const one = plan({ live: [{ assistantId: 1, sentAt: 0, aliveAt: 0 }], samples, maxGapMs: 120 * S });
    const ten = plan({ live: Array.from({ length: 10 }, () => ({ assistantId: 1, sentAt: 0, aliveAt: 0 })), samples, maxGapMs: 120 * S });
    expect(one).toBeGreaterThan(ten);
    expect(one).toBeGreaterThan(65 * S);
    expect(one).toBeLessThanOrEqual(69 * S);
    expect(ten).toBeGreaterThan(59.5 * S);
  });

  it('never polls sooner than the minimum gap, nor later than the maximum', () => {
    const live = Array.from({ length: 10 }, () => ({ assistantId: 1, sentAt: -100 * S, aliveAt: -100 * S }));
    expect(plan({ live, samples: () => exact(20 * S), lastPollAt: 0 })).toBe(1 * S);
    // Hour-long calls: not listed every minute, but at most every half hour.
    const long = [{ assistantId: 1, sentAt: 0, aliveAt: 0 }];
    const at = plan({ live: long, samples: () => exact(3600 * S), maxGapMs: 60 * S });
    expect(at).toBeGreaterThan(60 * S);
    expect(at).toBeLessThanOrEqual(1800 * S);
  });

  it('leaves the budget to dialing: waits when no request could start, rations harder when few could', () => {
    const live = Array.from({ length: 10 }, (_, i) => ({ assistantId: 1, sentAt: -i * 6 * S, aliveAt: 0 }));
    const samples = () => exact(60 * S).map((s, i) => ({ lo: s.lo - i * S, hi: s.hi + i * S }));
    const plenty = plan({ live, samples, headroom: 50 });
    const scarce = plan({ live, samples, headroom: 2 });
    expect(scarce).toBeGreaterThan(plenty);
    expect(plan({ live, samples, headroom: 0, now: 5 * S })).toBe(6 * S);
  });

  it('in a model campaign keeps slots busy at about 1.45 requests per call (10 slots, 15 s and 60 s calls)', () => {
    for (const [talk, goal] of [
      [15, 0.85],
      [60, 0.9],
    ] as const) {
      const r = modelCampaign(talk);
      expect(r.utilization, `${talk} s calls`).toBeGreaterThan(goal);
      expect(r.requestsPerCall, `${talk} s calls`).toBeLessThan(1.5);
    }
  });
});

/**
 * Ten slots refilled at each listing, calls lasting talk + 3–9 s (dialing and ringing,
 * as the simulator plans them), each listing 80 ms. Returns service-side utilization up
 * to the last call placed, and (make_calls + listings) per call.
 */
function modelCampaign(talkSeconds: number, calls = 300): { utilization: number; requestsPerCall: number } {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const samples: DurationSample[] = [];
  let live: { sentAt: number; endAt: number; aliveAt: number }[] = [];
  let t = 0;
  let placed = 0;
  let polls = 0;
  let lastPoll = Number.NEGATIVE_INFINITY;
  const spans: [number, number][] = [];
  const refill = () => {
    while (live.length < 10 && placed < calls) {
      live.push({ sentAt: t, endAt: t + (3 + Math.floor(random() * 7) + talkSeconds) * S, aliveAt: t });
      placed++;
    }
  };
  refill();
  while (live.length > 0) {
    const at = plan({ now: t, lastPollAt: lastPoll, live: live.map((c) => ({ assistantId: 1, sentAt: c.sentAt, aliveAt: c.aliveAt })), samples: () => samples });
    t = at + 80;
    polls++;
    lastPoll = at;
    live = live.filter((c) => {
      if (c.endAt > at) {
        c.aliveAt = at;
        return true;
      }
      recordSample(samples, { lo: c.aliveAt - c.sentAt, hi: at - c.sentAt });
      spans.push([c.sentAt, c.endAt]);
      return false;
    });
    refill();
  }
  const to = Math.max(...spans.map(([s]) => s));
  const busy = spans.reduce((sum, [s, e]) => sum + Math.max(0, Math.min(e, to) - s), 0);
  return { utilization: busy / (10 * to), requestsPerCall: (placed + polls) / placed };
}

// When to read the call list next, without webhooks. Pure: no clock, no store, no I/O,
// so the rule is unit-tested on its own (test/unit/engine-poll-plan.test.ts).
//
// Without webhooks a slot stays idle from the moment its call ends until a listing shows
// the end. Listing often cuts that delay but costs requests; listing when nothing can have
// ended is pure waste. So the plan estimates, from the durations of calls seen so far,
// how many of the live calls have probably ended by each instant, and lists when the slot
// time probably lost is worth a request. Calls placed together tend to end together, so a
// listing usually finds several ends at once.

/**
 * What one ended call taught about durations: it lasted more than `lo` ms after it was
 * sent (a listing showed it still in progress then) and at most `hi` ms (a listing showed
 * it ended). Polling only sees ends between two listings, never the instant itself.
 */
export interface DurationSample {
  lo: number;
  hi: number;
  /** Share of the estimate this piece holds (1 when left out): see `refineDurations`. */
  w?: number;
}

/** A call in progress as the plan needs it. */
export interface LiveCall {
  assistantId: number;
  sentAt: number;
  /** The latest instant the call was known to be in progress (a listing, or its sending). */
  aliveAt: number;
}

export interface PollPlanInput {
  now: number;
  /** When the last listing started (calls it showed in progress were live then). */
  lastPollAt: number;
  live: readonly LiveCall[];
  /** Recent duration samples of an assistant's calls, any order. */
  samples: (assistantId: number) => readonly DurationSample[];
  /** Requests that could start at once under the rate budget after waiting make_calls; undefined when not known. */
  headroom?: number;
  /** Listings per ended call to aim at (the requests polling adds to each call). */
  pollsPerCall: number;
  /** Never sooner than this after the last listing. */
  minGapMs: number;
  /** Never later than this after the last listing while calls are live. */
  maxGapMs: number;
  /** Fixed cadence while an assistant has too few samples to predict from. */
  learningGapMs: number;
}

/** Samples needed before an assistant's durations are trusted. */
export const MIN_SAMPLES = 3;
/** Samples kept per assistant: recent enough to follow a change, enough to show the spread. */
export const MAX_SAMPLES = 40;
/** A call beyond the durations seen is expected to end within this share of its age. */
const TAIL_SHARE = 0.25;
const TAIL_MIN_MS = 2_000;
/** With few calls live, list once this share of them has probably ended. */
const ALL_ENDED_SHARE = 0.8;
/** Below this probability of still being live by the model, a call counts as "beyond the model". */
const SURVIVAL_FLOOR = 0.02;
/** With this little headroom listings are rationed harder: dialing needs the budget more. */
const LOW_HEADROOM = 3;
const NO_HEADROOM_RETRY_MS = 1_000;
/** Instants looked at between the last listing and the latest next one. */
const STEPS = 600;
const MIN_STEP_MS = 100;

/** Adds a sample, keeping the newest MAX_SAMPLES. */
export function recordSample(samples: DurationSample[], sample: DurationSample): void {
  if (!(sample.hi >= sample.lo) || sample.lo < 0) return;
  samples.push(sample);
  if (samples.length > MAX_SAMPLES) samples.splice(0, samples.length - MAX_SAMPLES);
}

/**
 * The share of calls over within `d` ms of sending: each sample's end spread evenly over
 * its interval (a mixture of uniforms), the plainest reading of "ended between two looks".
 */
export function durationCdf(samples: readonly DurationSample[], d: number): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  let total = 0;
  for (const s of samples) {
    const w = s.w ?? 1;
    total += w;
    if (d >= s.hi) sum += w;
    else if (d > s.lo) sum += (w * (d - s.lo)) / (s.hi - s.lo);
  }
  return total > 0 ? sum / total : 0;
}

const REFINE_BINS = 120;
const REFINE_ROUNDS = 25;

/**
 * Sharpens the estimate: a wide interval ("ended some time in these 40 s") says less than
 * narrow ones, so its end is placed where the other samples say ends happen (the
 * self-consistent estimate of interval-censored data, on a grid). Returns weighted pieces.
 */
export function refineDurations(samples: readonly DurationSample[]): DurationSample[] {
  if (samples.length < 2) return [...samples];
  const from = Math.min(...samples.map((s) => s.lo));
  const to = Math.max(...samples.map((s) => s.hi));
  if (!(to > from)) return [...samples];
  const width = (to - from) / REFINE_BINS;
  // overlap[i][b]: the share of bin b inside sample i (a point sample: the bin holding it).
  const overlap = samples.map((s) => {
    const row = new Float64Array(REFINE_BINS);
    if (s.hi <= s.lo) row[Math.min(REFINE_BINS - 1, Math.floor((s.lo - from) / width))] = 1;
    else {
      for (let b = Math.floor((s.lo - from) / width); b < REFINE_BINS && from + b * width < s.hi; b++) {
        const lo = Math.max(s.lo, from + b * width);
        const hi = Math.min(s.hi, from + (b + 1) * width);
        if (hi > lo) row[b] = (hi - lo) / width;
      }
    }
    return row;
  });
  let p = new Float64Array(REFINE_BINS).fill(1 / REFINE_BINS);
  for (let round = 0; round < REFINE_ROUNDS; round++) {
    const next = new Float64Array(REFINE_BINS);
    for (const row of overlap) {
      let norm = 0;
      for (let b = 0; b < REFINE_BINS; b++) norm += row[b]! * p[b]!;
      if (norm <= 0) continue;
      for (let b = 0; b < REFINE_BINS; b++) next[b]! += (row[b]! * p[b]!) / norm;
    }
    for (let b = 0; b < REFINE_BINS; b++) next[b]! /= samples.length;
    p = next;
  }
  const pieces: DurationSample[] = [];
  for (let b = 0; b < REFINE_BINS; b++) if (p[b]! > 1e-6) pieces.push({ lo: from + b * width, hi: from + (b + 1) * width, w: p[b]! });
  return pieces;
}

/** Probability that a call live `aliveAge` ms after sending has ended by `age` ms. */
export function endedBy(samples: readonly DurationSample[], aliveAge: number, age: number): number {
  if (age <= aliveAge) return 0;
  const before = durationCdf(samples, aliveAge);
  const survival = 1 - before;
  if (survival < SURVIVAL_FLOOR) {
    // Longer than the calls seen so far: it ends some time, more likely soon than late,
    // and the longer it has lasted the longer it may still last (no poll storm on one long call).
    const tail = Math.max(TAIL_MIN_MS, TAIL_SHARE * aliveAge);
    return Math.min(1, (age - aliveAge) / tail);
  }
  return Math.min(1, Math.max(0, (durationCdf(samples, age) - before) / survival));
}

/** Expected number of `live` calls over by `t`. */
export function expectedEnded(input: Pick<PollPlanInput, 'live' | 'samples'>, t: number): number {
  let sum = 0;
  for (const c of input.live) sum += endedBy(input.samples(c.assistantId), c.aliveAt - c.sentAt, t - c.sentAt);
  return sum;
}

/** Mean of an assistant's sampled durations (each the middle of its interval), ms. */
export function meanDuration(samples: readonly DurationSample[]): number {
  if (samples.length === 0) return 0;
  return samples.reduce((sum, s) => sum + (s.lo + s.hi) / 2, 0) / samples.length;
}

/**
 * The instant to list calls next (≥ now). Infinity when no call is live: nothing can end,
 * and whatever starts a call (or an unknown answer) wakes the poller.
 *
 * The rule: list once the slot time probably lost since the last listing (calls over but
 * not yet seen, integrated over time) reaches what a listing is worth. With `n` calls of
 * mean duration `D` ending at random, listing when that idle time reaches
 * D / (2 n ρ²) costs about ρ listings per call and leaves each end unseen for the least
 * time at that cost (the square-root rule of batching); calls ending together reach the
 * mark sooner, so they are seen sooner at the same cost.
 */
export function nextPollAt(input: PollPlanInput): number {
  const { now, live } = input;
  if (live.length === 0) return Number.POSITIVE_INFINITY;
  const earliest = Math.max(now, input.lastPollAt + input.minGapMs);
  let latest = Math.max(earliest, input.lastPollAt + input.maxGapMs);
  if (input.headroom !== undefined && input.headroom < 1) return Math.min(latest, Math.max(earliest, now + NO_HEADROOM_RETRY_MS));

  // An assistant still learning its durations is read at a fixed cadence.
  if (live.some((c) => input.samples(c.assistantId).length < MIN_SAMPLES)) {
    return Math.min(latest, Math.max(earliest, input.lastPollAt + input.learningGapMs));
  }
  const refined = new Map<number, DurationSample[]>();
  const raw = input.samples;
  const estimate = (id: number): DurationSample[] => {
    let e = refined.get(id);
    if (!e) refined.set(id, (e = refineDurations(raw(id))));
    return e;
  };
  input = { ...input, samples: estimate };
  let rho = input.pollsPerCall;
  if (input.headroom !== undefined && input.headroom < LOW_HEADROOM) rho /= 2;
  const meanD = live.reduce((sum, c) => sum + meanDuration(input.samples(c.assistantId)), 0) / live.length;
  const worth = meanD / (2 * live.length * rho * rho);
  // Long calls are not listed every maxGap for nothing: at most twice per call.
  latest = Math.max(latest, input.lastPollAt + meanD / 2);
  // With few calls live, a batch worth a request may never come: list once most have probably ended.
  const most = ALL_ENDED_SHARE * live.length;

  const from = Math.min(earliest, ...live.map((c) => c.aliveAt));
  const step = Math.max(MIN_STEP_MS, (latest - from) / STEPS);
  let idle = 0;
  let t = from;
  for (; t + step <= earliest; t += step) idle += expectedEnded(input, t + step) * step;
  idle += expectedEnded(input, earliest) * (earliest - t);
  const due = (ended: number): boolean => idle >= worth || ended >= most;
  if (due(expectedEnded(input, earliest))) return earliest;
  for (t = earliest + step; t < latest; t += step) {
    const ended = expectedEnded(input, t);
    idle += ended * step;
    if (due(ended)) return Math.ceil(t);
  }
  return latest;
}

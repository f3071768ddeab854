import { hashSeed, mulberry32, pickWeighted, randomInt } from './random.js';
import type { CallPlan, FixedOutcome, OutcomeName } from './types.js';

/** Default shares of outcomes (a plausible outbound campaign). */
export const DEFAULT_OUTCOME_SHARES: Record<OutcomeName, number> = {
  human: 0.6,
  voicemail: 0.1,
  busy: 0.1,
  'no-answer': 0.15,
  failed: 0.05,
};

export interface PlanSettings {
  seed: number;
  shares: Record<OutcomeName, number>;
  talkSeconds: { min: number; max: number };
}

const PERSON_ENDINGS = ['completed', 'ended_by_customer', 'ended_by_assistant'] as const;

/**
 * Draws what will happen to a call. The stream is keyed by seed, number and the
 * number's call count, so the same seed gives the same outcomes whatever order
 * concurrent requests arrive in. `maxDuration` (the assistant's) caps talk time.
 */
export function drawPlan(
  settings: PlanSettings,
  phoneNumber: string,
  nthCall: number,
  maxDuration: number,
  fixed: FixedOutcome | undefined,
): CallPlan {
  const rand = mulberry32(hashSeed(settings.seed, `${phoneNumber}#${nthCall}`));
  const ringSeconds = randomInt(rand, 2, 8);
  if (fixed) return fixedPlan(fixed, ringSeconds, maxDuration);
  const outcome = pickWeighted(rand, settings.shares);
  const cap = Math.max(1, maxDuration);
  switch (outcome) {
    case 'human': {
      const talk = Math.min(cap, randomInt(rand, settings.talkSeconds.min, settings.talkSeconds.max));
      const ending = PERSON_ENDINGS[randomInt(rand, 0, PERSON_ENDINGS.length - 1)] ?? 'completed';
      return { outcome, finalStatus: ending, answeredBy: 'human', ringSeconds, talkSeconds: Math.max(1, talk) };
    }
    case 'voicemail':
      // The assistant hears a machine, leaves (or skips) a message, and hangs up.
      return { outcome, finalStatus: 'completed', answeredBy: 'machine', ringSeconds, talkSeconds: Math.min(cap, randomInt(rand, 5, 25)) };
    case 'busy':
      return { outcome, finalStatus: 'busy', answeredBy: null, ringSeconds: randomInt(rand, 1, 3), talkSeconds: 0 };
    case 'no-answer':
      return { outcome, finalStatus: 'no-answer', answeredBy: null, ringSeconds: randomInt(rand, 25, 40), talkSeconds: 0 };
    case 'failed':
      return { outcome, finalStatus: 'failed', answeredBy: null, ringSeconds: randomInt(rand, 1, 4), talkSeconds: 0 };
  }
}

const CONNECTED = new Set(['completed', 'ended', 'ended_by_customer', 'ended_by_assistant']);

function fixedPlan(fixed: FixedOutcome, ringSeconds: number, maxDuration: number): CallPlan {
  if (fixed.status === 'in-progress') {
    return { outcome: 'hang', finalStatus: 'in-progress', answeredBy: fixed.answered_by ?? 'human', ringSeconds, talkSeconds: Number.POSITIVE_INFINITY };
  }
  if (CONNECTED.has(fixed.status)) {
    const talk = Math.min(Math.max(1, maxDuration), fixed.duration ?? 30);
    return { outcome: 'fixed', finalStatus: fixed.status, answeredBy: fixed.answered_by ?? 'human', ringSeconds, talkSeconds: talk };
  }
  return {
    outcome: 'fixed',
    finalStatus: fixed.status,
    answeredBy: fixed.answered_by,
    ringSeconds: fixed.duration ?? ringSeconds,
    talkSeconds: 0,
  };
}

/** Normalises configured shares: unknown names are ignored, missing ones keep defaults. */
export function outcomeShares(custom: Partial<Record<OutcomeName, number>> | undefined): Record<OutcomeName, number> {
  const shares = { ...DEFAULT_OUTCOME_SHARES };
  for (const [name, share] of Object.entries(custom ?? {})) {
    if (name in shares && typeof share === 'number' && share >= 0) shares[name as OutcomeName] = share;
  }
  if (Object.values(shares).every((s) => s === 0)) throw new RangeError('outcome shares must not all be 0');
  return shares;
}

// The rule checks of test/helpers/invariants.ts must fail on violations, or the engine
// tests that rely on them prove nothing. Hand-made call records, one violation each.
import { describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import {
  assertAttemptBudget,
  assertInsideWindow,
  assertNoCallsBetween,
  assertNoOverlapPerNumber,
  assertParallelLimit,
  assertRetryGap,
  callClass,
  expectedLeadStates,
  maxConcurrent,
  type ObservedCall,
} from '../helpers/invariants.js';
import { campaignConfigFor } from '../helpers/stack.js';

const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);
const S = 1000;
let nextId = 1;
function call(phone: string, from: number, to: number | null, status = 'completed', answeredBy: ObservedCall['answered_by'] = 'human'): ObservedCall {
  return { id: nextId++, client_phone_number: phone, createdAt: T0 + from * S, finishedAt: to === null ? null : T0 + to * S, status, answered_by: answeredBy };
}
const A = '+12025550001';
const B = '+12025550002';
const C = '+12025550003';
const config = (s: Partial<CampaignConfig> = {}): CampaignConfig => campaignConfigFor({ settings: s, leads: [] }, 0, 1);

describe('invariants: each check catches its violation', () => {
  it('classifies outcomes as rule 5 does', () => {
    expect(callClass('completed', 'human')).toBe('success');
    expect(callClass('ended_by_assistant', null)).toBe('success');
    expect(callClass('completed', 'machine')).toBe('voicemail');
    expect(callClass('no-answer', null)).toBe('no-answer');
    expect(callClass('ringing', null)).toBe('in-progress');
  });

  it('counts concurrency with half-open intervals (a slot freed at t may be refilled at t)', () => {
    expect(maxConcurrent([call(A, 0, 10), call(B, 10, 20)]).max).toBe(1);
    expect(maxConcurrent([call(A, 0, 10), call(B, 5, 20), call(C, 9, null)]).max).toBe(3);
  });

  it('rule 3: overlapping calls to one number', () => {
    expect(() => assertNoOverlapPerNumber([call(A, 0, 10), call(A, 10, 20)])).not.toThrow();
    expect(() => assertNoOverlapPerNumber([call(A, 0, 10), call(A, 9, 20)])).toThrow(/rule 3/);
    expect(() => assertNoOverlapPerNumber([call(A, 0, null), call(A, 100, 120)])).toThrow(/rule 3/);
  });

  it('rule 2: more calls in progress than the limit', () => {
    const calls = [call(A, 0, 10), call(B, 5, 20), call(C, 8, 30)];
    expect(() => assertParallelLimit(calls, 3, 'c')).not.toThrow();
    expect(() => assertParallelLimit(calls, 2, 'c')).toThrow(/rule 2: 3 calls of c/);
  });

  it('rule 4: attempt budget and retry gap', () => {
    const calls = [call(A, 0, 10, 'busy', null), call(A, 70, 80, 'busy', null), call(A, 140, 150, 'busy', null)];
    expect(() => assertAttemptBudget(calls, [A], 2)).not.toThrow();
    expect(() => assertAttemptBudget(calls, [A], 1)).toThrow(/called 3 times/);
    expect(() => assertRetryGap(calls, 60)).not.toThrow();
    expect(() => assertRetryGap(calls, 61)).toThrow(/retry_interval is 61 s/);
  });

  it('rule 1: a call while the window was closed, or outside the person hours', () => {
    const window = config({ allowedHoursStart: 10 * 3600, allowedHoursEnd: 11 * 3600 });
    expect(() => assertInsideWindow([call(A, 0, 10)], window)).not.toThrow();
    expect(() => assertInsideWindow([call(A, -1, 10)], window)).toThrow(/rule 1/);
    expect(() => assertInsideWindow([call(A, 3600, 3700)], window)).toThrow(/rule 1/);
    const personal = config({ leadLocalHours: { start: 12 * 3600, end: 20 * 3600 } });
    expect(() => assertInsideWindow([call(A, 0, 10)], personal, new Map([[A, 'Asia/Tokyo']]))).not.toThrow();
    expect(() => assertInsideWindow([call(A, 0, 10)], personal, new Map([[A, 'America/New_York']]))).toThrow(/local hours/);
    expect(() => assertNoCallsBetween([call(A, 30, 40)], T0, T0 + 30 * S, 'paused')).not.toThrow();
    expect(() => assertNoCallsBetween([call(A, 29, 40)], T0, T0 + 30 * S, 'paused')).toThrow(/paused/);
  });

  it('rules 4 and 5 lead by lead: final states, and every way a lead can be mishandled', () => {
    const cfg = { maxRetries: 1, retryOn: ['busy' as const] };
    const lead = { contacts: [A, B] };
    // Primary busy twice, secondary succeeds.
    const good = [call(A, 0, 5, 'busy', null), call(A, 70, 75, 'busy', null), call(B, 80, 120)];
    expect(expectedLeadStates(good, [lead], cfg).get(A)).toBe('completed');
    // Primary no-answer (final here), secondary busy twice: exhausted.
    const exhausted = [call(A, 0, 30, 'no-answer', null), call(B, 40, 45, 'busy', null), call(B, 120, 125, 'busy', null)];
    expect(expectedLeadStates(exhausted, [lead], cfg).get(A)).toBe('reached-max-retries');
    // Both numbers refused by the service.
    expect(expectedLeadStates([], [lead], cfg, new Set([A, B])).get(A)).toBe('invalid');

    expect(() => expectedLeadStates([call(A, 0, 5, 'busy', null), call(B, 80, 120)], [lead], cfg)).toThrow(/not retried/);
    expect(() => expectedLeadStates([call(A, 0, 30), call(A, 100, 130)], [lead], cfg)).toThrow(/called again after call \d+ succeeded/);
    expect(() => expectedLeadStates([call(A, 0, 30, 'no-answer', null), call(A, 100, 130)], [lead], cfg)).toThrow(/final here/);
    expect(() => expectedLeadStates([call(A, 0, 30), call(B, 100, 130)], [lead], cfg)).toThrow(/after the lead was already completed/);
    expect(() => expectedLeadStates([call(A, 0, 30, 'failed', null)], [lead], cfg)).toThrow(/never called/);
    expect(() => expectedLeadStates([call(A, 0, 30, 'failed', null), call(B, 20, 40)], [lead], cfg)).toThrow(/before contact 0 was done/);
    expect(() => expectedLeadStates([call(A, 0, null, 'in-progress')], [lead], cfg)).toThrow(/still in-progress/);
  });
});

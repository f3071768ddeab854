// Rule 4: the attempt budget per contact, the interval after the previous end, secondary
// contacts in order, and unknown outcomes never retried.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RETRYABLE_CLASSES, type RetryableClass } from '../../src/config/types.js';
import { decideAfterAttempt, type AttemptOutcome, type RetryInput } from '../../src/engine/retry-policy.js';

const base: RetryInput = {
  outcome: 'busy',
  retryOn: [...RETRYABLE_CLASSES],
  maxRetries: 2,
  retryIntervalSeconds: 3600,
  contactPosition: 0,
  contactCount: 1,
  contactAttempts: 1,
  endedAt: 1_000_000,
};

describe('decideAfterAttempt', () => {
  it('success completes the lead, whatever the budget', () => {
    expect(decideAfterAttempt({ ...base, outcome: 'success', contactAttempts: 3 })).toEqual({ kind: 'complete' });
  });
  it('retries a retryable outcome retry_interval after the end', () => {
    expect(decideAfterAttempt(base)).toEqual({ kind: 'retry', nextDueAt: 1_000_000 + 3_600_000 });
    expect(decideAfterAttempt({ ...base, contactAttempts: 2 })).toEqual({ kind: 'retry', nextDueAt: 4_600_000 });
  });
  it('stops after 1 + max_retries attempts', () => {
    expect(decideAfterAttempt({ ...base, contactAttempts: 3 })).toEqual({
      kind: 'exhausted',
      reason: 'busy on attempt 3 of 3 (max_retries 2)',
    });
    expect(decideAfterAttempt({ ...base, maxRetries: 0 })).toMatchObject({ kind: 'exhausted' });
  });
  it('an outcome not in retry_on is final for the contact', () => {
    expect(decideAfterAttempt({ ...base, outcome: 'voicemail', retryOn: ['busy'] })).toEqual({
      kind: 'exhausted',
      reason: 'voicemail is not in retry_on',
    });
  });
  it('moves to the next contact, due retry_interval after the end', () => {
    const two = { ...base, contactCount: 3 };
    expect(decideAfterAttempt({ ...two, contactAttempts: 3 })).toEqual({ kind: 'next-contact', contactPosition: 1, nextDueAt: 4_600_000 });
    expect(decideAfterAttempt({ ...two, outcome: 'no-answer', retryOn: [], contactPosition: 1 })).toEqual({
      kind: 'next-contact',
      contactPosition: 2,
      nextDueAt: 4_600_000,
    });
    expect(decideAfterAttempt({ ...two, contactPosition: 2, contactAttempts: 3 })).toEqual({
      kind: 'exhausted',
      reason: 'busy on attempt 3 of 3 (max_retries 2); all 3 contacts tried',
    });
  });
  it('an unknown outcome is never retried and tries no other contact', () => {
    expect(decideAfterAttempt({ ...base, outcome: 'unknown', contactCount: 3 })).toEqual({
      kind: 'exhausted',
      reason: 'call outcome unknown; not retried',
    });
  });
});

describe('properties over random lead histories', () => {
  const outcome = fc.constantFrom<AttemptOutcome>('success', 'voicemail', 'busy', 'no-answer', 'failed', 'unknown');
  it('never exceed 1 + max_retries per contact, never due before end + interval, contacts in order', () => {
    fc.assert(
      fc.property(
        fc.record({
          retryOn: fc.subarray([...RETRYABLE_CLASSES] as RetryableClass[]),
          maxRetries: fc.integer({ min: 0, max: 5 }),
          retryIntervalSeconds: fc.integer({ min: 0, max: 86_400 }),
          contactCount: fc.integer({ min: 1, max: 4 }),
        }),
        fc.array(outcome, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 10 * 86_400_000 }), { minLength: 40, maxLength: 40 }),
        (cfg, outcomes, delays) => {
          const attempts = new Array<number>(cfg.contactCount).fill(0);
          let position = 0;
          let now = 1_700_000_000_000;
          let finished = false;
          for (let i = 0; i < outcomes.length && !finished; i++) {
            const out = outcomes[i] as AttemptOutcome;
            attempts[position] = (attempts[position] ?? 0) + 1;
            expect(attempts[position]).toBeLessThanOrEqual(1 + cfg.maxRetries);
            const endedAt = now + (delays[i] ?? 0);
            const d = decideAfterAttempt({ ...cfg, outcome: out, contactPosition: position, contactAttempts: attempts[position] as number, endedAt });
            switch (d.kind) {
              case 'complete':
                expect(out).toBe('success');
                finished = true;
                break;
              case 'exhausted':
                expect(d.reason.length).toBeGreaterThan(0);
                finished = true;
                break;
              case 'retry':
                expect(cfg.retryOn).toContain(out);
                expect(d.nextDueAt).toBeGreaterThanOrEqual(endedAt + cfg.retryIntervalSeconds * 1000);
                now = d.nextDueAt;
                break;
              case 'next-contact':
                expect(d.contactPosition).toBe(position + 1);
                expect(d.contactPosition).toBeLessThan(cfg.contactCount);
                expect(d.nextDueAt).toBeGreaterThanOrEqual(endedAt + cfg.retryIntervalSeconds * 1000);
                position = d.contactPosition;
                now = d.nextDueAt;
                break;
            }
            if (out === 'unknown') expect(d.kind).toBe('exhausted');
          }
          // Never more attempts in total than every contact's full budget.
          expect(attempts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(cfg.contactCount * (1 + cfg.maxRetries));
        },
      ),
      { numRuns: 500 },
    );
  });
});

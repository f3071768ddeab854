// Property: whatever the outcome shares, call durations, limits, retry settings and
// make_call faults, the rules checked from the simulator's record hold
// (test/helpers/invariants.ts).
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { RETRYABLE_CLASSES } from '../../src/config/types.js';
import { phoneNumbers, startStack } from '../helpers/stack.js';

const settingsArb = fc.record({
  shares: fc.record({
    human: fc.integer({ min: 0, max: 10 }),
    voicemail: fc.integer({ min: 0, max: 10 }),
    busy: fc.integer({ min: 0, max: 10 }),
    'no-answer': fc.integer({ min: 0, max: 10 }),
    failed: fc.integer({ min: 0, max: 10 }),
  }),
  minTalk: fc.integer({ min: 5, max: 40 }),
  extraTalk: fc.integer({ min: 0, max: 60 }),
  maxCallsInParallel: fc.integer({ min: 1, max: 4 }),
  accountMaxCalls: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  maxRetries: fc.integer({ min: 0, max: 3 }),
  retryIntervalSeconds: fc.integer({ min: 5, max: 120 }),
  retryOn: fc.subarray([...RETRYABLE_CLASSES]),
  leads: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 2, maxLength: 8 }),
  webhooks: fc.boolean(),
  callIdInResponse: fc.boolean(),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  // make_call faults: 429 (put back uncounted), 5xx (unknown, settled), connection dropped after create.
  faults: fc.record({
    rate_limited: fc.constantFrom(0, 0, 0.2),
    retry_after: fc.integer({ min: 1, max: 30 }),
    server_error: fc.constantFrom(0, 0, 0.2),
    drop_after_create: fc.constantFrom(0, 0, 0.2),
  }),
});

describe('engine: rules hold for random outcomes, durations, limits and retry settings', () => {
  // Fifteen stacks, each with its own database and migrations: minutes of a loaded machine.
  it('15 random campaigns against the simulator keep rules 1–5', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(settingsArb, async (p) => {
        // All-zero shares would fall back to the simulator's defaults; keep one share positive.
        const shares = Object.values(p.shares).some((v) => v > 0) ? p.shares : { ...p.shares, human: 1 };
        const numbers = phoneNumbers(p.leads.length * 3);
        const leads = p.leads.map((secondaries, i) => ({
          phone: numbers[3 * i]!,
          secondary: numbers.slice(3 * i + 1, 3 * i + 1 + secondaries),
        }));
        const stack = await startStack({
          scale: 800,
          seed: p.seed,
          outcomes: shares,
          callDurationSeconds: { min: p.minTalk, max: p.minTalk + p.extraTalk },
          webhooks: p.webhooks,
          callIdInResponse: p.callIdInResponse,
          faults: [{ path: '/api/user/make_call', ...p.faults }],
          settleSeconds: 60,
          ...(p.accountMaxCalls !== undefined ? { accountMaxCalls: p.accountMaxCalls } : {}),
          campaigns: [
            {
              settings: {
                maxCallsInParallel: p.maxCallsInParallel,
                maxRetries: p.maxRetries,
                retryIntervalSeconds: p.retryIntervalSeconds,
                retryOn: p.retryOn,
              },
              leads,
            },
          ],
        });
        try {
          await stack.waitForQuiet(30_000);
          await stack.assertAllRules();
        } finally {
          await stack.close();
        }
      }),
      { numRuns: 15, endOnFailure: true },
    );
  });
});

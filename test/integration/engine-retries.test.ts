// Rules 4 and 5 through the whole stack: secondary contacts in order, retry_on without
// voicemail, and a number the service refuses.
import { afterEach, describe, expect, it } from 'vitest';
import { callsByNumber } from '../helpers/invariants.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe('engine: retries, secondary contacts and refused numbers', () => {
  it('tries secondary contacts in order after the primary is exhausted; the first success completes the lead', async () => {
    const [p1, s1a, s1b, s1c, p2, s2a] = phoneNumbers(6);
    stack = await startStack({
      campaigns: [
        {
          settings: { maxCallsInParallel: 2, maxRetries: 1, retryIntervalSeconds: 120, retryOn: ['busy', 'failed'] },
          leads: [
            { phone: p1!, secondary: [s1a!, s1b!, s1c!] },
            { phone: p2!, secondary: [s2a!] },
          ],
        },
      ],
      fixedOutcomes: [
        { phone_number: p1!, status: 'busy', duration: 2 }, // retryable: 1 + 1 calls
        { phone_number: s1a!, status: 'no-answer', duration: 5 }, // not in retry_on: final after one call
        { phone_number: s1b!, status: 'completed', answered_by: 'human', duration: 30 }, // success
        { phone_number: s1c!, status: 'completed', answered_by: 'human', duration: 30 }, // never reached
        { phone_number: p2!, status: 'failed', duration: 1 },
        { phone_number: s2a!, status: 'busy', duration: 1 },
      ],
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    const byNumber = callsByNumber(stack.simCalls());
    expect(byNumber.get(p1!)?.length).toBe(2);
    expect(byNumber.get(s1a!)?.length).toBe(1);
    expect(byNumber.get(s1b!)?.length).toBe(1);
    expect(byNumber.get(s1c!)).toBeUndefined();
    expect(byNumber.get(p2!)?.length).toBe(2);
    expect(byNumber.get(s2a!)?.length).toBe(2);
    // Order of lead 1: primary twice, then secondary 1, then secondary 2.
    const order = stack
      .simCalls()
      .filter((c) => [p1, s1a, s1b].includes(c.client_phone_number))
      .map((c) => c.client_phone_number);
    expect(order).toEqual([p1, p1, s1a, s1b]);
    const states = await stack.db.selectFrom('leads').select(['phone_number', 'state']).orderBy('id').execute();
    expect(states).toEqual([
      { phone_number: p1, state: 'completed' },
      { phone_number: p2, state: 'reached-max-retries' },
    ]);
  });

  it('treats voicemail as final when retry_on leaves it out, and retries busy', async () => {
    const [vm, busy, human] = phoneNumbers(3);
    stack = await startStack({
      campaigns: [
        {
          settings: { maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60, retryOn: ['busy', 'no-answer', 'failed'] },
          leads: [{ phone: vm! }, { phone: busy! }, { phone: human! }],
        },
      ],
      fixedOutcomes: [
        // The webhook says only "completed": the engine must learn from the call list that a machine answered.
        { phone_number: vm!, status: 'completed', answered_by: 'machine', duration: 20 },
        { phone_number: busy!, status: 'busy', duration: 2, count: 1 },
        { phone_number: busy!, status: 'completed', answered_by: 'human', duration: 20 },
        { phone_number: human!, status: 'ended_by_customer', answered_by: 'human', duration: 40 },
      ],
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    const byNumber = callsByNumber(stack.simCalls());
    expect(byNumber.get(vm!)?.length).toBe(1);
    expect(byNumber.get(busy!)?.length).toBe(2);
    expect(byNumber.get(human!)?.length).toBe(1);
    const vmLead = await stack.db.selectFrom('leads').select('state').where('phone_number', '=', vm!).executeTakeFirstOrThrow();
    expect(vmLead.state).toBe('reached-max-retries');
    const vmAttempt = await stack.db.selectFrom('attempts').select(['outcome', 'answered_by']).where('phone_number', '=', vm!).executeTakeFirstOrThrow();
    expect(vmAttempt).toEqual({ outcome: 'voicemail', answered_by: 'machine' });
  });

  it('marks a lead invalid when the service refuses its number (400), and moves on from a refused secondary', async () => {
    const [good, bad2] = phoneNumbers(2);
    // E.164 for campaignd's import, but the service's own check refuses a leading 0.
    const refused = '+0123456789';
    const refused2 = '+0123456788';
    stack = await startStack({
      campaigns: [
        {
          settings: { maxCallsInParallel: 2, maxRetries: 2 },
          leads: [{ phone: refused }, { phone: refused2, secondary: [bad2!] }, { phone: good! }],
          rejected: [refused, refused2],
        },
      ],
      fixedOutcomes: [
        { phone_number: good!, status: 'completed', answered_by: 'human', duration: 10 },
        { phone_number: bad2!, status: 'completed', answered_by: 'human', duration: 10 },
      ],
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    const states = await stack.db.selectFrom('leads').select(['phone_number', 'state']).orderBy('id').execute();
    expect(states).toEqual([
      { phone_number: refused, state: 'invalid' },
      { phone_number: refused2, state: 'completed' },
      { phone_number: good, state: 'completed' },
    ]);
    const rejected = await stack.db.selectFrom('attempts').select(['phone_number', 'state']).where('state', '=', 'rejected').orderBy('id').execute();
    expect(rejected.map((r) => r.phone_number).sort()).toEqual([refused2, refused].sort());
  });
});

// The engine's active duties given up and taken back on a running engine (what a standby
// instance does when it loses or wins the role): while standby no call is placed, the
// calls already live still end through their webhooks, and once active again the campaign
// completes with every number called once.
import { afterEach, describe, expect, it } from 'vitest';
import { assertNoCallsBetween, callsByNumber } from '../helpers/invariants.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

describe('engine: active and standby on one engine', () => {
  it('becomeStandby stops dialing at once and webhooks are still recorded; becomeActive resumes and completes', async () => {
    const numbers = phoneNumbers(6);
    stack = await startStack({
      scale: 200,
      campaigns: [{ name: 'roles', settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 60),
    });
    const s = stack;
    const engine = s.engine!;
    expect(engine.isActive()).toBe(true);
    await waitUntil(() => s.simCalls().length >= 2, { message: 'two calls placed' });

    await engine.becomeStandby(0);
    const standbyAt = s.clock.now();
    const callsAtStandby = s.simCalls().length;
    expect(engine.isActive()).toBe(false);
    // The two live 60-second calls end while standby: only their webhooks can record it.
    await waitUntil(() => s.clock.now() >= standbyAt + 3 * 60_000, { message: 'three simulated minutes' });
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).execute()).length === 0, {
      message: 'the live calls recorded as ended by their webhooks',
    });
    assertNoCallsBetween(s.simCalls(), standbyAt + 1, s.clock.now(), 'standby engine');
    expect(s.simCalls().length).toBe(callsAtStandby);

    await engine.becomeActive();
    expect(engine.isActive()).toBe(true);
    await s.waitForQuiet();
    await s.assertAllRules();
    for (const n of numbers) expect(callsByNumber(s.simCalls()).get(n)).toHaveLength(1);
    const row = await s.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow();
    expect(row.state).toBe('completed');
  });
});

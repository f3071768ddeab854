// Post-call webhooks through the daemon's real HTTP surface: duplicated, arriving before
// make_call's answer, and lost (polling must still close every call).
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/ports.js';
import { callsByNumber } from '../helpers/invariants.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

async function snapshot(s: Stack): Promise<unknown> {
  const attempts = await s.db.selectFrom('attempts').selectAll().orderBy('id').execute();
  const leads = await s.db.selectFrom('leads').selectAll().orderBy('id').execute();
  return { attempts, leads };
}

describe('engine: webhooks', () => {
  it('a duplicated webhook changes nothing (one outcome per call)', async () => {
    const numbers = phoneNumbers(4);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: [...allSucceed(numbers.slice(0, 2)), ...numbers.slice(2).map((phone_number) => ({ phone_number, status: 'busy', duration: 2 }))],
    });
    await stack.waitForQuiet();
    await stack.sim.state.settled();
    await stack.assertAllRules();
    const before = await snapshot(stack);
    const deliveries = [...stack.sim.state.webhookDeliveries];
    expect(deliveries.length).toBe(stack.simCalls().length);
    for (const d of deliveries) {
      const res = await fetch(stack.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(d.payload) });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { detail: string }).detail).toBe('duplicate');
    }
    expect(await snapshot(stack)).toEqual(before);
    await stack.assertAllRules();
  });

  it('a webhook that arrives before the make_call answer gives one outcome; the late answer does not reopen it', async () => {
    const [early, other] = phoneNumbers(2);
    let heldBack = 0;
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: [{ phone: early! }, { phone: other! }] }],
      fixedOutcomes: [
        { phone_number: early!, status: 'busy', duration: 1 },
        ...allSucceed([other!]),
      ],
      // The answer to make_call for `early` is held back until its post-call webhook was applied.
      wrapClient: (inner): EngineClient => ({
        ...inner,
        async makeCall(req, opts) {
          const answer = await inner.makeCall(req, opts);
          if (req.phone_number === early) {
            await waitUntil(() => stack!.sim.state.webhookDeliveries.some((d) => d.payload.customer_phone === early && d.status !== null), {
              message: 'the webhook of the early call to be answered by the daemon',
            });
            heldBack++;
          }
          return answer;
        },
      }),
    });
    await stack.waitForQuiet();
    await stack.sim.state.settled();
    await stack.assertAllRules();
    expect(heldBack).toBe(1);
    const delivery = stack.sim.state.webhookDeliveries.find((d) => d.payload.customer_phone === early);
    expect(delivery?.status).toBe(200); // applied while the attempt was still `dialing`
    const attempts = await stack.db.selectFrom('attempts').selectAll().where('phone_number', '=', early!).execute();
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ state: 'ended', outcome: 'busy', outcome_source: 'webhook', call_status: 'busy' });
    expect(callsByNumber(stack.simCalls()).get(early!)).toHaveLength(1);
  });

  it('webhooks lost mid-campaign: polling still closes every call', async () => {
    const numbers = phoneNumbers(10);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 1, retryIntervalSeconds: 60 }, leads: numbers.map((phone) => ({ phone })) }],
      seed: 21,
    });
    const s = stack;
    await waitUntil(() => s.sim.state.webhookDeliveries.filter((d) => d.status === 200).length >= 3, { message: '3 webhooks applied' });
    // The service stops sending webhooks; the engine still believes they work.
    await s.client.updateAssistant(s.assistantId, { is_webhook_active: false });
    const lostFrom = s.sim.state.webhookDeliveries.length;
    await s.waitForQuiet(30_000);
    await s.assertAllRules();
    expect(s.sim.state.webhookDeliveries.length).toBe(lostFrom);
    const calls = s.simCalls();
    expect(calls.length).toBeGreaterThan(lostFrom);
    const byPoll = await s.db.selectFrom('attempts').select('id').where('state', '=', 'ended').where('outcome_source', '=', 'poll').execute();
    expect(byPoll.length).toBeGreaterThanOrEqual(calls.length - lostFrom);
  });
});

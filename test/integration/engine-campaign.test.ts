// Whole campaigns against the simulator on one sped-up clock: with webhooks, with
// polling alone, and with a service that names the call in make_call's answer. Every
// rule is checked from the simulator's own record of the calls (test/helpers/invariants).
import { afterEach, describe, expect, it } from 'vitest';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

const leads = (n: number, offset = 0) => phoneNumbers(n, offset).map((phone) => ({ phone }));

describe('engine: whole campaigns', () => {
  it('runs a campaign to the end with webhooks, keeping every rule', async () => {
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60 }, leads: leads(12) }],
      seed: 3,
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    const calls = stack.simCalls();
    expect(calls.length).toBeGreaterThanOrEqual(12);
    // Webhooks really carried outcomes (the poll is only a backstop here).
    await stack.sim.state.settled();
    const deliveries = stack.sim.state.webhookDeliveries;
    expect(deliveries).toHaveLength(calls.length);
    expect(deliveries.every((d) => d.status === 200 || d.status === 202)).toBe(true);
    const applied = deliveries.filter((d) => d.status === 200).length;
    expect(applied).toBeGreaterThanOrEqual(Math.ceil(calls.length / 2));
    const ended = await stack.db.selectFrom('attempts').select('outcome_source').where('state', '=', 'ended').execute();
    expect(ended).toHaveLength(calls.length);
    const campaign = await stack.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow();
    expect(campaign.state).toBe('completed');
  });

  it('runs the same campaign with polling only (no webhook configured)', async () => {
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60 }, leads: leads(12) }],
      seed: 3,
      webhooks: false,
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    expect(stack.sim.state.webhookDeliveries).toHaveLength(0);
    const bySource = await stack.db.selectFrom('attempts').select('outcome_source').where('state', '=', 'ended').execute();
    expect(bySource.length).toBe(stack.simCalls().length);
    expect(bySource.every((a) => a.outcome_source === 'poll')).toBe(true);
  });

  it('keeps the call id when make_call names the call (callIdInResponse)', async () => {
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 4, maxRetries: 1, retryIntervalSeconds: 30 }, leads: leads(8) }],
      seed: 5,
      callIdInResponse: true,
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
    const attempts = await stack.db.selectFrom('attempts').select(['call_id', 'phone_number']).execute();
    const simIds = new Map(stack.simCalls().map((c) => [String(c.id), c.client_phone_number]));
    expect(attempts.length).toBe(simIds.size);
    for (const a of attempts) expect(simIds.get(a.call_id ?? 'none')).toBe(a.phone_number);
  });

  it('never dials a number put on the suppression list in the store after the engine read its copy', async () => {
    const phones = phoneNumbers(6);
    const barred = phones[4]!;
    stack = await startStack({ campaigns: [{ settings: { maxCallsInParallel: 1, maxRetries: 0 }, leads: phones.map((phone) => ({ phone })) }], seed: 4 });
    // Another process (`campaignd suppress`, an import) writes the list; the engine's copy is not reloaded.
    await stack.db.insertInto('suppressions').values({ phone_number: barred, source: 'cli', added_at: stack.clock.now() }).execute();
    await stack.waitForQuiet();
    // Every other lead was dialled (the rules' own check would miss the suppressed lead's call).
    expect(stack.simCalls().map((c) => c.client_phone_number).sort()).toEqual(phones.filter((p) => p !== barred));
    const lead = await stack.db.selectFrom('leads').select('state').where('phone_number', '=', barred).executeTakeFirstOrThrow();
    expect(lead.state).toBe('suppressed');
  });

  it('holds the account-wide cap over two campaigns', async () => {
    stack = await startStack({
      campaigns: [
        { name: 'north', settings: { maxCallsInParallel: 3, maxRetries: 1, retryIntervalSeconds: 30 }, leads: leads(6) },
        { name: 'south', settings: { maxCallsInParallel: 3, maxRetries: 1, retryIntervalSeconds: 30 }, leads: leads(6, 100) },
      ],
      accountMaxCalls: 4,
      seed: 9,
    });
    await stack.waitForQuiet();
    await stack.assertAllRules();
  });
});

// Assistant variants (README, "Assistant variants"): every attempt of a lead is placed with its
// variant's assistant, the variant survives a restart with edited weights, and status and
// results show the same figures the simulator's record gives.
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { exportResults } from '../../src/results/export.js';
import { collectStatus } from '../../src/status/collect.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { phoneNumbers, startStack, waitUntil, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

async function useVariants(s: Stack, variants: CampaignConfig['variants']): Promise<CampaignConfig> {
  const c = s.campaigns[0]!;
  const config: CampaignConfig = { ...c.config, variants };
  await upsertCampaign(s.db, config, { timezone: 'UTC' }, s.clock.now());
  return config;
}

describe('engine: assistant variants', () => {
  it('places every attempt of a lead with its variant, keeps it across a restart with new weights, and status counts what the simulator saw', async () => {
    const numbers = phoneNumbers(60, 400);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 4, maxRetries: 2, retryIntervalSeconds: 60 }, leads: numbers.map((phone) => ({ phone })) }],
      outcomes: { human: 0.4, busy: 0.3, 'no-answer': 0.3 },
      startEngine: false,
      seed: 24,
    });
    const s = stack;
    const second = Number((await s.client.createAssistant({ assistant_name: 'Direct', calls_direction: 'make', engine_type: 'pipeline' } as never)).id);
    const first = s.assistantId;
    await useVariants(s, [
      { name: 'friendly', assistantId: first, weight: 1 },
      { name: 'direct', assistantId: second, weight: 1 },
    ]);
    await s.startEngine();
    await waitUntil(() => s.simCalls().length >= 25, { timeoutMs: 60_000 });
    await s.stopEngine();
    const before = await s.db.selectFrom('leads').select(['phone_number', 'variant']).where('variant', 'is not', null).execute();
    expect(before.length).toBeGreaterThan(0);

    // New weights: leads already given a variant keep it; only the others follow them.
    await useVariants(s, [
      { name: 'friendly', assistantId: first, weight: 1 },
      { name: 'direct', assistantId: second, weight: 1000 },
    ]);
    await s.startEngine();
    await s.waitForQuiet();
    await s.assertAllRules();

    const leads = await s.db.selectFrom('leads').select(['id', 'phone_number', 'variant']).execute();
    const variantOf = new Map(leads.map((l) => [l.phone_number, l.variant]));
    for (const b of before) expect(variantOf.get(b.phone_number), b.phone_number).toBe(b.variant);
    const assistantOf = { friendly: first, direct: second } as Record<string, number>;
    const calls = s.simCalls();
    expect(calls.length).toBeGreaterThan(60);
    // The simulator's record: each make_call carried the assistant of the lead's stored variant.
    for (const call of calls) expect(call.assistantId, call.client_phone_number).toBe(assistantOf[variantOf.get(call.client_phone_number)!]);
    const retried = new Set(calls.map((c) => c.client_phone_number).filter((p, i, all) => all.indexOf(p) !== i));
    expect(retried.size).toBeGreaterThan(5);

    const status = await collectStatus(s.db, { now: s.clock.now(), version: 'test', isPidAlive: () => true });
    const c = status.campaigns[0]!;
    expect(c.variants!.map((v) => v.name)).toEqual(['friendly', 'direct']);
    for (const v of c.variants!) {
      const mine = calls.filter((call) => variantOf.get(call.client_phone_number) === v.name);
      expect(v.assistant_id).toBe(assistantOf[v.name]);
      expect(v.leads).toBe(leads.filter((l) => l.variant === v.name).length);
      expect(v.calls).toBe(mine.length);
      const reached = new Set(mine.filter((call) => call.plan.outcome === 'human').map((call) => call.client_phone_number));
      expect(v.reached).toBe(reached.size);
      expect(v.successes).toBe(reached.size);
      const cost = mine.reduce((sum, call) => sum + call.total_cost, 0);
      expect(v.cost).toBeCloseTo(cost, 3);
      expect(v.success_rate).toBeCloseTo(reached.size / new Set(mine.map((m) => m.client_phone_number)).size, 4);
      expect(v.interval![0]).toBeLessThanOrEqual(v.success_rate!);
      expect(v.interval![1]).toBeGreaterThanOrEqual(v.success_rate!);
    }
    expect(typeof c.variants_p_value).toBe('number');
    expect(c.variants_significant).toBe(c.variants_p_value! < 0.05);

    // results: the variant column holds each lead's variant.
    let text = '';
    await exportResults(s.db, { format: 'csv', scope: {}, campaignNames: new Map([[s.campaigns[0]!.id, s.campaigns[0]!.name]]), bom: false }, async (t) => {
      text += t;
    });
    const [header, ...rows] = text.trim().split('\r\n');
    const col = header!.split(',').indexOf('variant');
    const phoneCol = header!.split(',').indexOf('phone_number');
    expect(col).toBeGreaterThan(0);
    for (const row of rows) {
      const cells = row.split(',');
      expect(cells[col], row).toBe(variantOf.get(cells[phoneCol]!) ?? '');
    }
  });
});

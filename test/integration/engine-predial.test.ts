// The pre-dial check through the whole stack: the engine, the simulator, and a real check
// endpoint on loopback answering per lead. Only the approved lead reaches make_call; a
// refusal cancels its lead with the reason; retry_after_seconds and every failure (a check
// slower than timeout_ms, a 500, an answer that is not JSON) defer the lead without
// counting an attempt; the check is asked while the claimed attempt holds its slot; status
// and the metrics count the checks.
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineMetrics } from '../../src/engine/engine.js';
import { collectStatus } from '../../src/status/collect.js';
import { cancelLead } from '../../src/store/lead-cancel.js';
import { ok, startPredialServer, type PredialAnswer, type PredialServer } from '../helpers/predial-server.js';
import { allSucceed, phoneNumbers, startStack, waitUntil, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
let server: PredialServer | null = null;
afterEach(async () => {
  await stack?.close();
  await server?.close();
  stack = null;
  server = null;
});

describe('engine: the pre-dial check', () => {
  it('calls only the approved lead; cancels, defers and fails the others without a call or a counted attempt', async () => {
    const [approve, refuse, later, slow, broken, garbage] = phoneNumbers(6);
    const answers = new Map<string, PredialAnswer>([
      [approve!, ok({ call: true })],
      [refuse!, ok({ call: false, reason: 'customer bought yesterday' })],
      [later!, ok({ call: false, retry_after_seconds: 3600 })],
      [slow!, 'hang'],
      [broken!, { status: 500, body: 'oops' }],
      [garbage!, { status: 200, body: 'call me maybe' }],
    ]);
    const heldWhileChecking: boolean[] = [];
    server = await startPredialServer(async (req) => {
      // The claim came first: the attempt is committed and holds its slot while the check runs.
      const attempt = await stack!.db.selectFrom('attempts').select('state').where('lead_id', '=', req.json.lead_id).where('state', '=', 'dialing').executeTakeFirst();
      heldWhileChecking.push(attempt !== undefined);
      return answers.get(req.json.phone_number)!;
    });
    const checks: string[] = [];
    const metrics: EngineMetrics = {
      callPlaced: () => undefined,
      outcome: () => undefined,
      liveCalls: () => undefined,
      unknownAttempt: () => undefined,
      predialCheck: (campaign, result) => checks.push(`${campaign}:${result}`),
    };
    stack = await startStack({
      // 5× time: the 5 s timeout is 1 s here, a failed check's 60 s deferral 12 s.
      scale: 5,
      campaigns: [
        {
          name: 'checked',
          settings: { maxCallsInParallel: 6, predial: { url: server.url, secretEnv: 'PREDIAL_SECRET', timeoutMs: 5000 } },
          leads: [approve, refuse, later, slow, broken, garbage].map((phone) => ({ phone: phone! })),
        },
      ],
      fixedOutcomes: allSucceed([approve!], 2),
      predialSecrets: { PREDIAL_SECRET: 'predial-secret-0123456789' },
      metrics,
    });
    const s = stack;
    const leads = () => s.db.selectFrom('leads').select(['id', 'phone_number', 'state', 'state_reason', 'next_due_at', 'contact_attempts']).orderBy('id').execute();
    await waitUntil(
      async () => {
        const dialing = await s.db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).executeTakeFirst();
        if (dialing !== undefined) return false;
        // Every lead decided by its first check: called, cancelled, or waiting with the check's word.
        return (await leads()).every((l) => l.state === 'completed' || l.state === 'cancelled' || (l.state === 'pending' && l.state_reason?.startsWith('pre-dial check')));
      },
      { message: async () => `checks of ${server!.seen.length} leads, leads ${JSON.stringify(await leads())}` },
    );
    await s.stopEngine();
    const now = s.clock.now();

    // No make_call for any lead that was not approved.
    expect(s.simCalls().map((c) => c.client_phone_number)).toEqual([approve]);
    expect(heldWhileChecking.every(Boolean)).toBe(true);
    const first = server.seen.find((r) => r.json.phone_number === approve)!;
    expect(first.json).toMatchObject({ campaign: 'checked', attempt: 1, variables: { name: 'lead 2' } });

    const byPhone = new Map((await leads()).map((l) => [l.phone_number, l]));
    expect(byPhone.get(approve!)).toMatchObject({ state: 'completed', contact_attempts: 1 });
    expect(byPhone.get(refuse!)).toMatchObject({ state: 'cancelled', state_reason: 'customer bought yesterday', next_due_at: null, contact_attempts: 0 });
    const deferred = byPhone.get(later!)!;
    expect(deferred).toMatchObject({ state: 'pending', state_reason: 'pre-dial check: not now', contact_attempts: 0 });
    expect(Number(deferred.next_due_at)).toBeGreaterThan(now + 3500_000);
    for (const [phone, detail] of [
      [slow!, 'no answer within 5000 ms'],
      [broken!, 'answered HTTP 500'],
      [garbage!, 'answer is not JSON'],
    ] as const) {
      expect(byPhone.get(phone), phone).toMatchObject({ state: 'pending', state_reason: `pre-dial check failed: ${detail}`, contact_attempts: 0 });
      expect(Number(byPhone.get(phone)!.next_due_at)).toBeGreaterThan(now);
    }
    // The attempts not placed are withdrawn and not counted (not a call, not a retry).
    const notPlaced = await s.db.selectFrom('attempts').select(['state', 'counted']).where('phone_number', '!=', approve!).execute();
    expect(notPlaced.length).toBeGreaterThanOrEqual(5);
    expect(new Set(notPlaced.map((a) => `${a.state}/${Number(a.counted)}`))).toEqual(new Set(['withdrawn/0']));

    const report = await collectStatus(s.db, { now, version: 'test', isPidAlive: () => true });
    const predial = report.campaigns[0]!.predial!;
    expect(predial.checks).toBe(server.seen.length);
    expect(predial.failures).toBe(checks.filter((c) => c === 'checked:failed').length);
    expect(predial.failures).toBeGreaterThanOrEqual(3);
    expect(predial.last_failure?.detail).toMatch(/^pre-dial check failed: /);
    expect(report.campaigns[0]!.leads).toMatchObject({ cancelled: 1, completed: 1, pending: 4 });
    expect(new Set(checks)).toEqual(new Set(['checked:call', 'checked:cancel', 'checked:defer', 'checked:failed']));
  });

  it('places no call for a lead cancelled while its check ran, though the check said yes', async () => {
    const [phone] = phoneNumbers(1, 40);
    server = await startPredialServer(async (req) => {
      expect(await cancelLead(stack!.db, req.json.lead_id, { now: stack!.clock.now(), reason: 'bought meanwhile' })).toMatchObject({ kind: 'cancelled-live-call' });
      return ok({ call: true });
    });
    stack = await startStack({
      scale: 10,
      campaigns: [{ settings: { predial: { url: server.url, secretEnv: 'S', timeoutMs: 10_000 } }, leads: [{ phone: phone! }] }],
      fixedOutcomes: allSucceed([phone!], 2),
      predialSecrets: { S: 'predial-secret-0123456789' },
    });
    await stack.waitForQuiet();
    expect(stack.simCalls()).toEqual([]);
    const lead = await stack.db.selectFrom('leads').select(['state', 'state_reason', 'contact_attempts']).executeTakeFirstOrThrow();
    expect(lead).toEqual({ state: 'cancelled', state_reason: 'bought meanwhile', contact_attempts: 0 });
    const attempts = await stack.db.selectFrom('attempts').select(['state', 'counted']).execute();
    expect(attempts.map((a) => [a.state, Number(a.counted)])).toEqual([['withdrawn', 0]]);
  });

  it('ends a check in flight when the engine stops: the attempt is withdrawn, not left for recovery, and nobody is called', async () => {
    const [phone] = phoneNumbers(1, 60);
    server = await startPredialServer(() => 'hang');
    stack = await startStack({
      scale: 10,
      // 30 s on the engine's clock (3 s here): the stop comes long before.
      campaigns: [{ settings: { predial: { url: server.url, secretEnv: 'S', timeoutMs: 30_000 } }, leads: [{ phone: phone! }] }],
      predialSecrets: { S: 'predial-secret-0123456789' },
    });
    const s = stack;
    await waitUntil(() => server!.seen.length === 1, { message: 'the check asked' });
    const before = s.clock.now();
    await s.stopEngine(3_600_000);
    expect(s.clock.now() - before).toBeLessThan(30_000);
    expect(s.simCalls()).toEqual([]);
    const attempts = await s.db.selectFrom('attempts').select(['state', 'counted']).execute();
    expect(attempts.map((a) => [a.state, Number(a.counted)])).toEqual([['withdrawn', 0]]);
    const lead = await s.db.selectFrom('leads').select(['state', 'state_reason', 'contact_attempts']).executeTakeFirstOrThrow();
    expect(lead).toEqual({ state: 'pending', state_reason: 'pre-dial check failed: the daemon is stopping', contact_attempts: 0 });
  });
});

// Crashes around make_call (rule 6): a process that died after committing an attempt,
// before or after sending it, and a fresh engine started on the same database file.
// In neither case is the person called twice.
import { afterEach, describe, expect, it } from 'vitest';
import { claimAttempt } from '../../src/store/attempts.js';
import { openStore } from '../../src/store/open-store.js';
import type { AttemptRow } from '../../src/store/types.js';
import { callsByNumber } from '../helpers/invariants.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** What the dead process did: committed a `dialing` attempt for the campaign's first lead, in its own connection. */
async function crashedProcessClaims(s: Stack, phone: string): Promise<AttemptRow> {
  const other = await openStore(s.dbFile);
  try {
    const campaign = s.campaigns[0]!;
    const lead = await other.db.selectFrom('leads').select(['id', 'contact_position']).where('phone_number', '=', phone).executeTakeFirstOrThrow();
    const claim = await claimAttempt(other.db, {
      campaignId: campaign.id,
      leadId: lead.id,
      contactPosition: lead.contact_position,
      phoneNumber: phone,
      assistantId: s.assistantId,
      owner: 'dead-process',
      now: s.clock.now(),
    });
    if (!claim.ok) throw new Error(`claim failed: ${claim.reason}`);
    return claim.attempt;
  } finally {
    await other.close();
  }
}

describe('engine: restart after a crash around make_call', () => {
  it('committed but never sent: recovered as unknown, settled as never placed after the settle window, then called exactly once', async () => {
    const [victim, other] = phoneNumbers(2);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 1 }, leads: [{ phone: victim! }, { phone: other! }] }],
      fixedOutcomes: allSucceed([victim!, other!]),
      startEngine: false,
      settleSeconds: 180,
    });
    const crashed = await crashedProcessClaims(stack, victim!);
    await stack.startEngine();
    await stack.waitForQuiet();
    await stack.assertAllRules();

    const calls = callsByNumber(stack.simCalls()).get(victim!) ?? [];
    expect(calls).toHaveLength(1);
    const first = await stack.db.selectFrom('attempts').selectAll().where('id', '=', crashed.id).executeTakeFirstOrThrow();
    expect(first).toMatchObject({ state: 'never-placed', outcome_source: 'settle', counted: 0 });
    // Not settled before the settle window, and the person was called only after that.
    expect(first.ended_at! - crashed.created_at).toBeGreaterThanOrEqual(180_000);
    expect(calls[0]!.createdAt).toBeGreaterThanOrEqual(first.ended_at!);
    const events = await stack.db.selectFrom('events').select('kind').where('attempt_id', '=', crashed.id).orderBy('id').execute();
    expect(events.map((e) => e.kind)).toEqual(['recovered-unknown', 'settled-never-placed']);
    const lead = await stack.db.selectFrom('leads').select(['state', 'contact_attempts']).where('phone_number', '=', victim!).executeTakeFirstOrThrow();
    expect(lead).toEqual({ state: 'completed', contact_attempts: 1 });
  });

  it('sent but the answer never recorded: the call is found in the call list and not placed again', async () => {
    const [victim, other] = phoneNumbers(2, 10);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 2 }, leads: [{ phone: victim! }, { phone: other! }] }],
      fixedOutcomes: allSucceed([victim!, other!], 90),
      startEngine: false,
    });
    const crashed = await crashedProcessClaims(stack, victim!);
    // The dead process sent make_call; the service created the call; the answer was lost with the process.
    await stack.client.makeCall({ phone_number: victim!, assistant_id: stack.assistantId, variables: {} });
    expect(stack.simCalls()).toHaveLength(1);
    await stack.startEngine();
    await stack.waitForQuiet();
    await stack.assertAllRules();

    expect(callsByNumber(stack.simCalls()).get(victim!)).toHaveLength(1);
    const attempts = await stack.db.selectFrom('attempts').selectAll().where('phone_number', '=', victim!).execute();
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ id: crashed.id, state: 'ended', outcome: 'success' });
    expect(attempts[0]!.call_id).toBe(String(stack.simCalls()[0]!.id));
    const events = await stack.db.selectFrom('events').select('kind').where('attempt_id', '=', crashed.id).execute();
    expect(events.map((e) => e.kind)).toContain('recovered-unknown');
  });

  it('a restart keeps the live-call limit: live attempts of the dead process count against the new one', async () => {
    const numbers = phoneNumbers(5, 30);
    stack = await startStack({
      campaigns: [{ settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 120),
      startEngine: false,
    });
    // Two calls were placed by the dead process (limit reached), answers lost.
    for (const phone of numbers.slice(0, 2)) {
      await crashedProcessClaims(stack, phone);
      await stack.client.makeCall({ phone_number: phone, assistant_id: stack.assistantId, variables: {} });
    }
    await stack.startEngine();
    await stack.waitForQuiet();
    await stack.assertAllRules(); // includes: never more than 2 calls in progress at once
    for (const phone of numbers) expect(callsByNumber(stack.simCalls()).get(phone)).toHaveLength(1);
  });
});

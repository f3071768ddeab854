// The poller learns the call list's order: once a listing read to its end showed it newest
// first, a later listing stops at the page past every call it looks for, instead of reading
// the whole day. An unknown attempt still gets the whole list (only a complete listing may
// settle it as never placed).
import { afterEach, describe, expect, it } from 'vitest';
import { claimAttempts } from '../../src/store/attempts.js';
import { pollOnce, type ListOrder } from '../../src/engine/poller.js';
import type { EngineClient } from '../../src/engine/ports.js';
import { pollerDeps, POLLER_OPTIONS } from '../helpers/poller.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

/** An attempt to `phone` in `state`, sent now, with no call in the service's list. */
async function stage(s: Stack, phone: string, state: 'placed' | 'unknown'): Promise<number> {
  const lead = await s.db.selectFrom('leads').select(['id', 'campaign_id', 'contact_position']).where('phone_number', '=', phone).executeTakeFirstOrThrow();
  const [claim] = await claimAttempts(s.db, [
    { campaignId: lead.campaign_id, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone, assistantId: s.assistantId, owner: 'test', now: s.clock.now() },
  ]);
  if (!claim?.ok) throw new Error('could not stage the attempt');
  await s.db.updateTable('attempts').set({ state, settle_deadline: state === 'unknown' ? s.clock.now() + 3_600_000 : null }).where('id', '=', claim.attempt.id).execute();
  return claim.attempt.id;
}

describe('poller: the call list newest first', () => {
  it('stops paging past every call it looks for once the order is learnt; an unknown attempt still reads the whole list', async () => {
    const [placedPhone, unknownPhone, ...others] = phoneNumbers(252, 900);
    stack = await startStack({ campaigns: [{ leads: [{ phone: placedPhone! }, { phone: unknownPhone! }] }], webhooks: false, startEngine: false });
    const s = stack;
    // 250 calls earlier today: three pages of 100.
    for (const phone of others) await s.client.makeCall({ phone_number: phone, assistant_id: s.assistantId });
    await s.clock.sleep(5 * 60_000);
    const placed = await stage(s, placedPhone!, 'placed');

    const listOrder = new Map<number, ListOrder>();
    const deps = await pollerDeps(s, { listOrder });
    // Not learnt yet: the whole list (3 pages), which shows it newest first.
    expect((await pollOnce(deps, POLLER_OPTIONS)).requests).toBe(3);
    expect(listOrder.get(s.assistantId)).toEqual({ newestFirst: true, broken: false });
    // Learnt: page 1 ends with calls made before the attempt was sent; none after can be its call.
    expect((await pollOnce(deps, POLLER_OPTIONS)).requests).toBe(1);
    // Without the knowledge, every round reads everything.
    expect((await pollOnce(await pollerDeps(s), POLLER_OPTIONS)).requests).toBe(3);

    // An unknown attempt: the whole list, even with the order learnt.
    await s.db.updateTable('attempts').set({ state: 'ended', outcome: 'busy', outcome_source: 'poll', ended_at: s.clock.now() }).where('id', '=', placed).execute();
    await stage(s, unknownPhone!, 'unknown');
    expect((await pollOnce(deps, POLLER_OPTIONS)).requests).toBe(3);
  });

  it('a list seen in any other order is read to its end from then on', async () => {
    const [placedPhone, ...others] = phoneNumbers(251, 1200);
    stack = await startStack({ campaigns: [{ leads: [{ phone: placedPhone! }] }], webhooks: false, startEngine: false });
    const s = stack;
    for (const phone of others) await s.client.makeCall({ phone_number: phone, assistant_id: s.assistantId });
    await s.clock.sleep(5 * 60_000);
    await stage(s, placedPhone!, 'placed');
    const listOrder = new Map<number, ListOrder>([[s.assistantId, { newestFirst: true, broken: false }]]);
    // The same service, but each page oldest first.
    const shuffled: EngineClient = { ...s.engineClient, listCallsSince: (id, from, onPage) => s.engineClient.listCallsSince(id, from, (calls) => onPage([...calls].reverse())) };
    const deps = await pollerDeps(s, { listOrder, client: shuffled });
    expect((await pollOnce(deps, POLLER_OPTIONS)).requests).toBe(3);
    expect(listOrder.get(s.assistantId)).toEqual({ newestFirst: true, broken: true });
    expect((await pollOnce(deps, POLLER_OPTIONS)).requests).toBe(3);
  });
});

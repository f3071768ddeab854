import { describe, expect, it } from 'vitest';
import { createAccountDialing } from '../../src/engine/account-dialing.js';
import { createHeldAccounts, everyAccountHeld } from '../../src/ha/held-accounts.js';
import { FENCED_SQLSTATE } from '../../src/store/fencing.js';
import { ManualClock } from '../../src/time/clock.js';

// The dial loop's view of the accounts it holds: the fence a claim carries, a refused claim
// dropping the account it names, and a handover waiting for exactly that account's requests.

function deferred(): { promise: Promise<string>; resolve: (v: string) => void; reject: (e: Error) => void } {
  let resolve!: (v: string) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('account dialing', () => {
  it('dials and fences only held accounts, until their local deadline', () => {
    const clock = new ManualClock(1_000);
    const held = createHeldAccounts(clock);
    held.take('acme', 4, 2_000);
    const dialing = createAccountDialing(held);
    expect(dialing.mayDial('acme')).toBe(true);
    expect(dialing.claimFence('acme')).toEqual({ account: 'acme', fence: 4 });
    expect(dialing.mayDial('globex')).toBe(false);
    clock.jump(1_000);
    expect(dialing.mayDial('acme')).toBe(false);
    expect(dialing.claimFence('acme')).toBeUndefined();
  });

  it('stops dialing an account at once when the database refuses its fence, and only that one', () => {
    const held = createHeldAccounts(new ManualClock(0));
    held.take('acme', 1, 10_000);
    held.take('globex', 1, 10_000);
    const lost: string[] = [];
    held.onChange((c) => c.kind === 'lost' && lost.push(c.account));
    const dialing = createAccountDialing(held);
    expect(dialing.refused(Object.assign(new Error('refused'), { code: FENCED_SQLSTATE, detail: 'acme' }))).toBe(true);
    expect(lost).toEqual(['acme']);
    expect(dialing.mayDial('acme')).toBe(false);
    expect(dialing.mayDial('globex')).toBe(true);
    // Another error (or the one lease's refusal, which names no account) is not an account's.
    expect(dialing.refused(Object.assign(new Error('refused'), { code: FENCED_SQLSTATE }))).toBe(false);
    expect(dialing.refused(new Error('connection reset'))).toBe(false);
  });

  it("awaits in a handover exactly the account's requests in flight, answered or failed", async () => {
    const dialing = createAccountDialing(createHeldAccounts(new ManualClock(0)));
    const a1 = deferred();
    const a2 = deferred();
    const b1 = deferred();
    void dialing.track('acme', a1.promise);
    void dialing.track('acme', a2.promise).catch(() => undefined);
    void dialing.track('globex', b1.promise);
    expect(dialing.inflight('acme')).toBe(2);
    let drained = false;
    const drain = dialing.drain('acme').then(() => (drained = true));
    a1.resolve('placed');
    await Promise.resolve();
    await Promise.resolve();
    expect(drained).toBe(false);
    a2.reject(new Error('socket hang up'));
    await drain;
    expect(dialing.inflight('acme')).toBe(0);
    // globex's request is still out: not awaited by acme's handover.
    expect(dialing.inflight('globex')).toBe(1);
    b1.resolve('placed');
    await dialing.drain('globex');
    expect(dialing.inflight('globex')).toBe(0);
  });

  it('with one daemon holding every account: always dialable, never fenced', () => {
    const dialing = createAccountDialing(everyAccountHeld(() => ['default']));
    expect(dialing.mayDial('default')).toBe(true);
    expect(dialing.claimFence('default')).toBeUndefined();
  });
});

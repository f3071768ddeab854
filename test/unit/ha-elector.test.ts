import { describe, expect, it } from 'vitest';
import { createElector, leaseMargin, type LeasePort } from '../../src/ha/elector.js';
import { silentLogger } from '../../src/log/logger.js';
import { ManualClock } from '../../src/time/clock.js';

// The elector's decisions on a manual clock. The lease row itself is played by a small
// model with the same rules as src/store/lease.ts (whose SQL is tested on PostgreSQL in
// test/integration/ha-lease.test.ts); here what matters is when an instance believes it
// holds the lease, and that it never believes so after the database would disagree.

const LEASE_MS = 9_000;

/** One lease row, judged by `clock` (the database's clock). */
function leaseTable(clock: ManualClock) {
  let row: { holder: string; token: number; expiresAt: number } | null = null;
  return {
    row: () => row,
    port(holder: string, opts: { down?: () => boolean } = {}): LeasePort {
      const check = () => {
        if (opts.down?.()) throw new Error('connection refused');
      };
      return {
        async take() {
          check();
          const now = clock.now();
          if (row && row.expiresAt > now && row.holder !== holder) return null;
          row = { holder, token: (row?.token ?? 0) + 1, expiresAt: now + LEASE_MS };
          return row.token;
        },
        async renew(token) {
          check();
          const now = clock.now();
          if (!row || row.holder !== holder || row.token !== token || row.expiresAt <= now) return false;
          row.expiresAt = now + LEASE_MS;
          return true;
        },
        async release(token) {
          check();
          if (row && row.holder === holder && row.token === token) row.expiresAt = 0;
        },
      };
    },
  };
}

function instance(name: string, clock: ManualClock, port: LeasePort) {
  const events: string[] = [];
  const elector = createElector({
    lease: port,
    leaseMs: LEASE_MS,
    clock,
    logger: silentLogger(),
    onActive: (token) => events.push(`active:${token}`),
    onStandby: () => events.push('standby'),
  });
  return { name, elector, events };
}

describe('elector', () => {
  it('one instance of two is active; the other takes over within a third of a lease after the first stops renewing', async () => {
    const clock = new ManualClock();
    const table = leaseTable(clock);
    let aFrozen = false;
    const a = instance('a', clock, table.port('a', { down: () => aFrozen }));
    const b = instance('b', clock, table.port('b'));
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await clock.advance(30_000);
    expect(a.events).toEqual(['active:1']);
    expect(b.events).toEqual([]);
    expect(a.elector.holds()).toBe(true);
    expect(b.elector.holds()).toBe(false);

    // a can no longer reach the database (or is frozen): its lease runs out in the database,
    // and a believes it holds it for less time than that.
    aFrozen = true;
    const lastRenewal = table.row()!.expiresAt - LEASE_MS;
    let aLostAt = -1;
    let bActiveAt = -1;
    for (let t = 0; t < 20_000 && (aLostAt < 0 || bActiveAt < 0); t += 100) {
      await clock.advance(100);
      if (aLostAt < 0 && !a.elector.holds()) aLostAt = clock.now();
      if (bActiveAt < 0 && b.elector.holds()) bActiveAt = clock.now();
    }
    expect(aLostAt).toBeLessThanOrEqual(lastRenewal + LEASE_MS - leaseMargin(LEASE_MS));
    // Never two believing at once: a let go before the database would let b in.
    expect(aLostAt).toBeLessThan(bActiveAt);
    expect(bActiveAt).toBeLessThanOrEqual(lastRenewal + LEASE_MS + LEASE_MS / 3 + 100);
    expect(b.events).toEqual(['active:2']);
    await clock.advance(LEASE_MS);
    expect(a.events).toEqual(['active:1', 'standby']);

    // a comes back: the database says b holds the lease, so a stays standby.
    aFrozen = false;
    await clock.advance(30_000);
    expect(a.elector.holds()).toBe(false);
    expect(b.elector.holds()).toBe(true);
    expect(a.events).toEqual(['active:1', 'standby']);
    await a.elector.stop();
    await b.elector.stop();
  });

  it('a process frozen past its lease wakes up holding nothing, before it asks anyone', async () => {
    const clock = new ManualClock();
    const table = leaseTable(clock);
    const a = instance('a', clock, table.port('a'));
    a.elector.start();
    await clock.advance(0);
    expect(a.elector.holds()).toBe(true);
    // No timer runs while the process is stopped: time jumps without the elector running.
    clock.jump(LEASE_MS * 2);
    expect(a.elector.holds()).toBe(false);
    expect(a.elector.token()).toBe(1);
    await clock.advance(LEASE_MS);
    expect(a.events[1]).toBe('standby');
    await a.elector.stop();
  });

  it('a clean stop releases the lease, so a standby takes it at its next look', async () => {
    const clock = new ManualClock();
    const table = leaseTable(clock);
    const a = instance('a', clock, table.port('a'));
    const b = instance('b', clock, table.port('b'));
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await clock.advance(1_000);
    await a.elector.stop();
    await clock.advance(LEASE_MS / 3);
    expect(b.elector.holds()).toBe(true);
    expect(b.events).toEqual(['active:2']);
    await b.elector.stop();
    expect(table.row()!.expiresAt).toBe(0);
  });
});

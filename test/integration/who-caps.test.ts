// Who may be called (docs/design.md §11), attempts per number: a cap over every campaign's attempts in a rolling
// window, held across an engine restart, and named by explain. Judged from the
// simulator's call records alone.
import { afterEach, describe, expect, it } from 'vitest';
import { capHold } from '../../src/engine/caps.js';
import { explainNumber } from '../../src/explain/explain.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { AttemptState } from '../../src/store/types.js';
import { ManualClock } from '../../src/time/clock.js';
import { callsByNumber } from '../helpers/invariants.js';
import { startStack, waitUntil, type Stack } from '../helpers/stack.js';

const X = '+12025550301';
const Y = '+12025550302';
const HOUR = 3_600_000;

describe('max_attempts_per_number (docs/design.md §11)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('allows at most 3 attempts to a number in any rolling 2 h over two campaigns, across a restart', async () => {
    const cap = { count: 3, windowHours: 2, origin: 'daemon max_attempts_per_number' };
    const settings = { retryIntervalSeconds: 60, maxRetries: 20, callingPolicy: { rules: [], caps: [cap] } };
    stack = await startStack({
      scale: 1500,
      campaigns: [
        { name: 'first', settings, leads: [{ phone: X }, { phone: Y }] },
        { name: 'second', settings, leads: [{ phone: X }] },
      ],
      // Nobody ever answers: without the cap, each lead would be retried every minute.
      fixedOutcomes: [X, Y].map((phone_number) => ({ phone_number, status: 'no-answer', duration: 0 })),
    });
    const s = stack;
    const start = s.clock.now();
    const calls = (phone: string) => callsByNumber(s.simCalls()).get(phone) ?? [];
    await waitUntil(() => calls(X).length >= 3 && calls(Y).length >= 3, { timeoutMs: 30_000, message: () => `${calls(X).length} calls to X` });

    // Held: explain names the cap and when the number may be called again.
    const explained = await explainNumber(s.db, X, s.clock.now(), () => true);
    const held = explained.leads.filter((l) => l.state === 'retry-scheduled' || l.state === 'pending');
    expect(held.length).toBeGreaterThan(0);
    for (const l of held) expect(l.message).toMatch(/at most 3 attempts to this number per 2 h \(daemon max_attempts_per_number\)/);
    expect(held.some((l) => l.next_call_at !== null)).toBe(true);

    // A restart in the middle of the hold: the cap is read from the attempts in the store.
    await s.stopEngine();
    await s.startEngine();
    await waitUntil(() => s.clock.now() > start + 5 * HOUR, { timeoutMs: 40_000 });
    await s.stopEngine();

    for (const phone of [X, Y]) {
      const list = calls(phone).map((c) => c.createdAt).sort((a, b) => a - b);
      // More than one window's worth happened (the cap lifts), and no 2 h holds more than 3.
      expect(list.length, phone).toBeGreaterThan(3);
      for (const [i, t] of list.entries()) {
        const inWindow = list.filter((u) => u > t - 2 * HOUR && u <= t).length;
        expect(inWindow, `${phone} call ${i} at ${new Date(t).toISOString()}`).toBeLessThanOrEqual(3);
      }
    }
    // X was called by both campaigns: the cap counted them together.
    const perCampaign = await s.db.selectFrom('attempts').select(['campaign_id']).where('phone_number', '=', X).execute();
    expect(new Set(perCampaign.map((a) => a.campaign_id)).size).toBe(2);
  });
});

describe('capHold: the rolling window over stored attempts', () => {
  let store: DatabaseHandle | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('counts every sent attempt of every campaign until its answer leaves the window, never withdrawn ones', async () => {
    const T = Date.UTC(2026, 5, 1, 12);
    store = await openTestStore();
    const db = store.db;
    await migrateToLatest(db, { clock: new ManualClock(T) });
    const ids: number[] = [];
    for (const name of ['a', 'b']) {
      const c = await db.insertInto('campaigns').values({ name, state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, config_json: '{}', created_at: T, updated_at: T }).returning('id').executeTakeFirstOrThrow();
      const l = await db.insertInto('leads').values({ campaign_id: c.id, dedupe_key: X, phone_number: X, state: 'pending', next_due_at: T, created_at: T, updated_at: T }).returning('id').executeTakeFirstOrThrow();
      ids.push(c.id, l.id);
    }
    const attempt = (i: number, createdAt: number, state: AttemptState, answeredAt: number | null) =>
      db.insertInto('attempts').values({ campaign_id: ids[i * 2]!, lead_id: ids[i * 2 + 1]!, contact_position: 0, phone_number: X, assistant_id: 1, state, counted: 1, created_at: createdAt, sent_at: createdAt, answered_at: answeredAt, ended_at: answeredAt === null ? null : answeredAt + 60_000 }).execute();
    await attempt(0, T - 23 * HOUR, 'ended', T - 23 * HOUR + 5_000);
    await attempt(1, T - 10 * HOUR, 'ended', T - 10 * HOUR + 2_000);
    await attempt(0, T - 9 * HOUR, 'withdrawn', null); // never sent: not counted
    await attempt(1, T - 1 * HOUR, 'ended', T - 1 * HOUR + 1_000);
    const cap = { count: 3, windowHours: 24, origin: 'test' };
    const hold = await capHold(db, [cap], X, T);
    // The oldest counted call may have been created up to its answer: held until that leaves the window.
    expect(hold).toEqual({ cap, count: 3, until: T + 1 * HOUR + 5_000 });
    expect(await capHold(db, [cap], X, T + HOUR + 5_000)).toBeNull();
    expect(await capHold(db, [{ count: 4, windowHours: 24, origin: 'x' }], X, T)).toBeNull();
    // The tightest of several caps holds longest.
    const hourly = { count: 1, windowHours: 2, origin: 'rule' };
    expect((await capHold(db, [cap, hourly], X, T))?.until).toBe(T + HOUR + 5_000);
    expect((await capHold(db, [hourly], X, T))?.until).toBe(T + HOUR + 1_000);
    expect(await capHold(db, [], X, T)).toBeNull();
  });
});

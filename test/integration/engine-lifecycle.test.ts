// Campaign lifecycle and windows through the whole stack: pause/resume by the database
// row (as `campaignd campaign pause` does), and a window that opens later.
import { afterEach, describe, expect, it } from 'vitest';
import { setCampaignState } from '../../src/store/campaigns.js';
import { assertNoCallsBetween, callsByNumber, maxConcurrent } from '../helpers/invariants.js';
import { allSucceed, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';

let stack: Stack | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
});

const CONTROL_CHECK_MS = 1_000;
/** Simulated ms that a few real ms of processing cost at the test's time scale. */
const PROCESSING_SLACK_MS = 4_000;

describe('engine: pause, resume and windows', () => {
  it('pause via the database stops new calls within one control check; live calls finish; resume completes the campaign', async () => {
    const numbers = phoneNumbers(8);
    stack = await startStack({
      scale: 200,
      campaigns: [{ name: 'pausable', settings: { maxCallsInParallel: 2, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers, 60),
    });
    const s = stack;
    await waitUntil(() => s.simCalls().length >= 2, { message: 'two calls placed' });
    const pausedAt = s.clock.now();
    await setCampaignState(s.db, 'pausable', 'paused', pausedAt);
    const callsAtPause = s.simCalls().length;

    // Five simulated minutes of pause: the calls in progress end and are followed to their outcome.
    await waitUntil(() => s.clock.now() >= pausedAt + 5 * 60_000, { message: 'five simulated minutes' });
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).execute()).length === 0, {
      message: 'live calls of the paused campaign to end',
    });
    const pausedUntil = s.clock.now();
    assertNoCallsBetween(s.simCalls(), pausedAt + CONTROL_CHECK_MS + PROCESSING_SLACK_MS, pausedUntil, 'paused campaign');
    expect(s.simCalls().length).toBeLessThan(numbers.length);
    expect(s.simCalls().length).toBeLessThanOrEqual(callsAtPause + 2);
    const ended = await s.db.selectFrom('attempts').select('state').execute();
    expect(ended.every((a) => a.state === 'ended')).toBe(true);
    const waiting = await s.db.selectFrom('leads').select('id').where('state', '=', 'pending').execute();
    expect(waiting.length).toBeGreaterThan(0);

    await setCampaignState(s.db, 'pausable', 'running', s.clock.now());
    await s.waitForQuiet();
    await s.assertAllRules();
    for (const n of numbers) expect(callsByNumber(s.simCalls()).get(n)).toHaveLength(1);
    const row = await s.db.selectFrom('campaigns').select('state').executeTakeFirstOrThrow();
    expect(row.state).toBe('completed');
  });

  it('a window that is closed now: no call until it opens, then the campaign runs; lead_local_hours waits for the person', async () => {
    const london = phoneNumbers(4, 40);
    const berlin = phoneNumbers(1, 60)[0]!;
    const origin = Date.UTC(2026, 0, 5, 9, 50, 0); // Monday 09:50 UTC
    const opens = Date.UTC(2026, 0, 5, 10, 0, 0);
    const londonOpens = Date.UTC(2026, 0, 5, 10, 30, 0); // 10:30 in London (UTC+0 in January)
    stack = await startStack({
      scale: 1000,
      origin,
      campaigns: [
        {
          settings: {
            timezone: 'UTC',
            allowedDays: [1, 2, 3, 4, 5],
            allowedHoursStart: 10 * 3600,
            allowedHoursEnd: 18 * 3600,
            // 10:30 local: already open in Berlin (09:30 UTC) when the campaign opens, not yet in London.
            leadLocalHours: { start: 10 * 3600 + 30 * 60, end: 20 * 3600 },
            maxCallsInParallel: 3,
            maxRetries: 1,
          },
          leads: [...london.map((phone) => ({ phone, timezone: 'Europe/London' })), { phone: berlin, timezone: 'Europe/Berlin' }],
        },
      ],
      fixedOutcomes: allSucceed([...london, berlin]),
    });
    const s = stack;
    await s.waitForQuiet(30_000);
    await s.assertAllRules(); // includes: every call created while both windows were open
    assertNoCallsBetween(s.simCalls(), origin, opens, 'window closed');
    const berlinCall = callsByNumber(s.simCalls()).get(berlin)![0]!;
    // The scheduler woke for the opening instead of idling: the call came right after it.
    expect(berlinCall.createdAt).toBeGreaterThanOrEqual(opens);
    expect(berlinCall.createdAt - opens).toBeLessThan(60_000);
    for (const n of london) {
      const first = callsByNumber(s.simCalls()).get(n)![0]!.createdAt;
      expect(first).toBeGreaterThanOrEqual(londonOpens);
      expect(first - londonOpens).toBeLessThan(10 * 60_000);
    }
    expect(maxConcurrent(s.simCalls()).max).toBeLessThanOrEqual(3);
  });
});

// Campaign lifecycle and windows through the whole stack: pause/resume by the database
// row (as `campaignd campaign pause` does), and a window that opens later.
import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_MAX_AGE_MS } from '../../src/engine/policy.js';
import { setCampaignState } from '../../src/store/campaigns.js';
import { assertInsideWindow, assertNoCallsBetween, callsByNumber, maxConcurrent } from '../helpers/invariants.js';
import { allSucceed, DEFAULT_ORIGIN, phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { waitUntil } from '../helpers/wait.js';
import { HarnessClock } from './time-clock.js';

let stack: Stack | null = null;
let harness: HarnessClock | null = null;
afterEach(async () => {
  await stack?.close();
  stack = null;
  harness?.dispose();
  harness = null;
});

const CONTROL_CHECK_MS = 1_000;
/**
 * Simulated ms allowed for processing (100 real ms at 200x). Still far below the
 * 60-second calls that hold both slots when the pause begins: without the pause, the
 * next call would come only once one of them ended.
 */
const PROCESSING_SLACK_MS = 20_000;

describe('engine: pause, resume and windows', () => {
  it('pause via the database stops new calls within one control check; live calls finish; resume completes the campaign', async () => {
    const numbers = phoneNumbers(8);
    // A stall of this process counts as at most 5 ms, not as simulated seconds past the slack.
    harness = new HarnessClock(200, DEFAULT_ORIGIN);
    stack = await startStack({
      clock: harness,
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
    expect(s.simCalls().length).toBe(callsAtPause); // both slots were busy with 60-second calls
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
    const londonOpens = Date.UTC(2026, 0, 5, 10, 10, 0); // 10:10 in London (UTC+0 in January)
    // A stall of this process (a busy machine) counts as at most 5 ms: with a plain scaled
    // clock a late timer or a slow pass moved the opening's first call minutes later. Time
    // stands still while the stack is set up (a new database on a loaded PostgreSQL took
    // longer than the 0.45 real s to the opening), and the engine starts ten minutes before
    // the opening: 1.5 real s for its start.
    harness = new HarnessClock(400, origin);
    harness.freeze();
    stack = await startStack({
      clock: harness,
      startEngine: false,
      campaigns: [
        {
          settings: {
            timezone: 'UTC',
            allowedDays: [1, 2, 3, 4, 5],
            allowedHoursStart: 10 * 3600,
            allowedHoursEnd: 18 * 3600,
            // 10:10 local: already open in Berlin (09:10 UTC) when the campaign opens, not yet in London.
            leadLocalHours: { start: 10 * 3600 + 10 * 60, end: 20 * 3600 },
            maxCallsInParallel: 3,
            maxRetries: 1,
          },
          leads: [...london.map((phone) => ({ phone, timezone: 'Europe/London' })), { phone: berlin, timezone: 'Europe/Berlin' }],
        },
      ],
      fixedOutcomes: allSucceed([...london, berlin]),
    });
    const s = stack;
    harness.thaw();
    await s.startEngine();
    await s.waitForQuiet(30_000);
    await s.assertAllRules(); // includes: every call created while both windows were open
    assertNoCallsBetween(s.simCalls(), origin, opens, 'window closed');
    const calls = callsByNumber(s.simCalls());
    // When the scheduler took each first call: the claim's instant, read as the pass woke.
    // The call's own time adds the pass's reads and the make_call request, each real time
    // of a loaded database that the clock runs 400 times faster (0.6 s was 4 minutes).
    const claimedAt = async (phone: string) =>
      Number((await s.db.selectFrom('attempts').select((eb) => eb.fn.min('created_at').as('t')).where('phone_number', '=', phone).executeTakeFirstOrThrow()).t);
    // Not before the opening (the call itself, as the service saw it)...
    expect(calls.get(berlin)![0]!.createdAt).toBeGreaterThanOrEqual(opens);
    // ...and the scheduler woke for the campaign's opening at 10:00 rather than idling until
    // London's at 10:10 (its next lead-hours opening): 3 minutes of slack is far below those 10.
    expect((await claimedAt(berlin)) - opens).toBeLessThan(3 * 60_000);
    for (const n of london) {
      expect(calls.get(n)![0]!.createdAt).toBeGreaterThanOrEqual(londonOpens);
      // Held until their own opening and taken then, not at some later fallback (an hour).
      expect((await claimedAt(n)) - londonOpens).toBeLessThan(5 * 60_000);
    }
    expect(maxConcurrent(s.simCalls()).max).toBeLessThanOrEqual(3);
  });

  it('a window that closes while make_call waits for the rate budget: the request is withheld, not sent late', async () => {
    const numbers = phoneNumbers(6, 70);
    harness = new HarnessClock(400, Date.UTC(2026, 0, 5, 10, 0, 0));
    stack = await startStack({
      clock: harness,
      campaigns: [{ settings: { allowedDays: [1, 2, 3, 4, 5], allowedHoursStart: 10 * 3600, maxCallsInParallel: 3, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      // The first make_calls are refused with a 15-minute wait: the client's budget pauses past the closing.
      faults: [{ path: '/api/user/make_call', rate_limited: 1, retry_after: 900 }],
      fixedOutcomes: allSucceed(numbers),
      startEngine: false,
    });
    const s = stack;
    // The window closes ten simulated minutes after the engine starts (set now: setting up
    // takes simulated time), well inside the 429's 15-minute wait, which begins after the
    // start. Ten minutes are 1.5 real s for the first claim, the refused request and the
    // read below on a loaded database (five, 0.75 s, were not always enough).
    const closes = Math.ceil((s.clock.now() + 10 * 60_000) / 1000) * 1000;
    const config = { ...s.campaigns[0]!.config, allowedHoursEnd: Math.round((closes - Date.UTC(2026, 0, 5)) / 1000) };
    await s.db.updateTable('campaigns').set({ config_json: JSON.stringify(config) }).execute();
    await s.startEngine();
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', '=', 'withdrawn').execute()).length >= 1, {
      message: 'a make_call refused with 429',
    });
    await s.control('/__sim/reset-faults');
    expect(s.clock.now()).toBeLessThan(closes);
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('detail', '=', 'window closed before the request could be sent').execute()).length > 0, {
      message: 'a request withheld when the budget resumed',
    });
    await waitUntil(async () => (await s.db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).execute()).length === 0, {
      message: 'no attempt left in flight',
    });
    // Whatever was sent was sent while the window was open; the rest waits for Tuesday.
    assertInsideWindow(s.simCalls(), config);
    const withheld = await s.db.selectFrom('attempts').select('detail').where('detail', '=', 'window closed before the request could be sent').execute();
    expect(withheld.length).toBeGreaterThan(0);
    const waiting = await s.db.selectFrom('leads').select(['state', 'contact_attempts', 'next_due_at']).where('state', '!=', 'completed').execute();
    expect(waiting.length).toBeGreaterThan(0);
    // Withheld and refused requests cost no attempt.
    for (const l of waiting) expect(l.contact_attempts).toBe(0);
  });

  it('a claim that waited past CLAIM_MAX_AGE_MS before its request (the process stalled) is not sent: withdrawn uncounted, judged again, then called once', async () => {
    const numbers = phoneNumbers(1, 71);
    harness = new HarnessClock(400, Date.UTC(2026, 0, 5, 10, 0, 0));
    const clock = harness;
    let stalls = 0;
    stack = await startStack({
      clock,
      campaigns: [{ settings: { allowedHoursStart: 9 * 3600, allowedHoursEnd: 17 * 3600, maxCallsInParallel: 1, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers),
      // The first request stalls between its claim and its send for longer than a claim may age.
      wrapClient: (inner) => ({
        ...inner,
        makeCall(req, opts) {
          if (stalls++ === 0) clock.jumpTo(clock.now() + CLAIM_MAX_AGE_MS + 60_000);
          return inner.makeCall(req, opts);
        },
      }),
    });
    const s = stack;
    await waitUntil(async () => (await s.db.selectFrom('leads').select('state').executeTakeFirstOrThrow()).state === 'completed', {
      message: async () => `the lead called after its stale claim: ${JSON.stringify(await s.db.selectFrom('attempts').select(['state', 'detail']).execute())}`,
    });
    const attempts = await s.db.selectFrom('attempts').select(['state', 'counted', 'detail']).orderBy('id').execute();
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ state: 'withdrawn', counted: 0 });
    expect(attempts[0]!.detail).toMatch(/^claimed 5\d min before it could be sent \(the process stalled\)/);
    expect(attempts[1]!.state).not.toBe('withdrawn');
    expect(s.simCalls()).toHaveLength(1);
    const lead = await s.db.selectFrom('leads').select('contact_attempts').executeTakeFirstOrThrow();
    expect(Number(lead.contact_attempts)).toBe(1);
  });
});

// Who may be called (docs/design.md §11), the person's zone from the number: leads without a timezone column, in
// every US zone, Alaska, Hawaii, Puerto Rico and multi-zone area codes, are called only
// inside lead_local_hours in each of their zones. Judged from the simulator's own call
// records with luxon wall-clock fields and a zone table written here by hand (not the
// engine's lookup or window code).
import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { callsByNumber } from '../helpers/invariants.js';
import { allSucceed, startStack, type Stack } from '../helpers/stack.js';
import { HarnessClock } from './time-clock.js';

const H = 3600;
/** Where each number's owner may be (from the area code), as a person would look it up. */
const PEOPLE: Record<string, string[]> = {
  '+12125550101': ['America/New_York'], // New York
  '+13125550102': ['America/Chicago'], // Chicago
  '+13035550103': ['America/Denver'], // Denver
  '+16025550104': ['America/Phoenix'], // Arizona: no DST
  '+12135550105': ['America/Los_Angeles'], // Los Angeles
  '+18085550106': ['Pacific/Honolulu'], // Hawaii
  '+19075550107': ['America/Adak', 'America/Anchorage'], // Alaska: the area code spans two zones
  '+12082001234': ['America/Boise', 'America/Los_Angeles'], // Idaho 208 2…: Mountain and Pacific
  '+17875550109': ['America/Puerto_Rico'], // Puerto Rico: AST, no DST
  '+80055501110': ['UTC'], // no zone known: the campaign's zone (UTC) is used
};

describe('the called person’s zone from the number (docs/design.md §11)', () => {
  let stack: Stack | undefined;
  let harness: HarnessClock | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    harness?.dispose();
    harness = undefined;
  });

  it('calls every lead only inside 09:00–17:00 in each of its zones, the day after spring-forward', async () => {
    const numbers = Object.keys(PEOPLE);
    // Monday 2026-03-09 12:00 UTC: the US changed to DST the day before; every US zone is still before 09:00.
    const origin = Date.UTC(2026, 2, 9, 12, 0, 0);
    // A stall of this process counts as at most 5 ms (at 2000x a plain scaled clock made a
    // second of a loaded machine into 33 simulated minutes). 1000x: the engine's reads before
    // a claim still take real time (0.6 s of a loaded PostgreSQL was 20 minutes at 2000x).
    harness = new HarnessClock(1000, origin);
    stack = await startStack({
      clock: harness,
      campaigns: [{ settings: { leadLocalHours: { start: 9 * H, end: 17 * H }, maxCallsInParallel: 5, maxRetries: 0 }, leads: numbers.map((phone) => ({ phone })) }],
      fixedOutcomes: allSucceed(numbers),
    });
    const s = stack;
    await s.waitForQuiet(60_000);
    const calls = callsByNumber(s.simCalls());
    for (const phone of numbers) {
      const list = calls.get(phone) ?? [];
      expect(list.length, `${phone} called once`).toBe(1);
      const at = list[0]!.createdAt;
      for (const zone of PEOPLE[phone]!) {
        const local = DateTime.fromMillis(at, { zone });
        expect(local.hour >= 9 && local.hour < 17, `${phone} called at ${local.toISO()} (${zone})`).toBe(true);
      }
      // Taken soon after the last of its zones opened, not an hour late (standard time the
      // day after spring-forward, or another of its zones: an hour or more away): the
      // claim's instant, read as the scheduler woke (the call's own time adds the pass's
      // reads and the request). 30 minutes are 1.8 real s at 1000x.
      const opens = Math.max(...PEOPLE[phone]!.map((zone) => DateTime.fromMillis(origin, { zone }).set({ hour: 9, minute: 0, second: 0, millisecond: 0 }).toMillis()));
      const claimed = await s.db.selectFrom('attempts').select('created_at').where('phone_number', '=', phone).executeTakeFirstOrThrow();
      // (Those open at the start wait for the stack to start: seconds of real time at 1000x.)
      if (opens > origin + 3_600_000) expect(Number(claimed.created_at) - opens, `${phone} waited from its opening`).toBeLessThan(30 * 60_000);
    }
    // Spot checks of the hand-made table against the instants: Honolulu opens 19:00 UTC; 208 2… at 16:00 UTC (Pacific).
    expect(calls.get('+18085550106')![0]!.createdAt).toBeGreaterThanOrEqual(Date.UTC(2026, 2, 9, 19));
    expect(calls.get('+12082001234')![0]!.createdAt).toBeGreaterThanOrEqual(Date.UTC(2026, 2, 9, 16));
    expect(calls.get('+19075550107')![0]!.createdAt).toBeGreaterThanOrEqual(Date.UTC(2026, 2, 9, 18));
  }, 90_000);
});

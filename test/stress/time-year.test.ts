// Issue 6, time harness part 2 (stress profile): the year's campaigns (time-year-plan.ts)
// through the whole of 2026 — every DST change of Berlin, New York, Santiago and Lord
// Howe, weekday restrictions and every blackout date — with time sped up (30,000×) and closed
// stretches skipped (see time-fixture.ts). Every call the simulator recorded must lie
// inside its windows, and every open stretch of half an hour or more must hold a call.
import { describe, expect, it } from 'vitest';
import { assertYear, changesCovered, yearRun } from '../integration/time-year-plan.js';
import { runTimed } from '../integration/time-scenario.js';

describe('time harness: a whole simulated year', () => {
  it('2026: every call inside its windows, every window used, blackout dates and weekdays honoured', async () => {
    const run = yearRun(Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 30_000, 840_000, (now) =>
      console.log(`time-year: simulated ${new Date(now).toISOString()}`),
    );
    const result = await runTimed(run);
    assertYear(run, result);
    // Both changes of each DST zone fell inside a used window.
    expect(changesCovered(run, result)).toEqual(
      expect.arrayContaining([
        'berlin-overnight@2026-03-29',
        'berlin-overnight@2026-10-25',
        'newyork-gap@2026-03-08',
        'newyork-gap@2026-11-01',
        'santiago-midnight@2026-04-05',
        'santiago-midnight@2026-09-06',
        'lordhowe-half-hour@2026-04-04',
        'lordhowe-half-hour@2026-10-03',
      ]),
    );
    console.log(
      `time-year: ${result.calls.length} calls, ${result.stretches.length} open stretches, ${Math.round(result.skippedMs / 3_600_000)} h skipped, ` +
        `${result.realMs} ms real (${Math.round(result.frozenMs)} ms frozen for make_call, ${Math.round(result.stalledMs)} ms of stalls not counted)`,
    );
  }, 900_000);
});

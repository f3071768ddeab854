// Issue 6, time harness part 2 (short profile for `npm test`): the year's campaigns
// (time-year-plan.ts) over two and a half weeks of March and April 2026, across the
// changes of Berlin (Mar 29), Santiago and Lord Howe (Apr 5) and a blackout date (New York's
// change is in time-dst.test.ts). The whole year runs in test/stress/time-year.test.ts.
import { describe, expect, it } from 'vitest';
import { changesCovered, assertYear, yearRun } from './time-year-plan.js';
import { runTimed } from './time-scenario.js';

describe('time harness: weeks across three DST changes', () => {
  it('every call inside its windows, every window used, blackout dates and weekdays honoured', async () => {
    const run = yearRun(Date.UTC(2026, 2, 21), Date.UTC(2026, 3, 8), 40_000, 150_000);
    const result = await runTimed(run);
    assertYear(run, result);
    expect(changesCovered(run, result)).toEqual(
      expect.arrayContaining(['berlin-overnight@2026-03-29', 'santiago-midnight@2026-04-05', 'lordhowe-half-hour@2026-04-04']),
    );
    console.log(`time-year (short): ${result.calls.length} calls, ${Math.round(result.skippedMs / 3_600_000)} h skipped, ${result.realMs} ms real`);
  }, 180_000);
});

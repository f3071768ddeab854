// The campaigns of the year-long time harness (issue 6), shared by the short run in
// `npm test` (time-year.test.ts, a few weeks over four DST changes) and the whole year
// in `npm run test:slow` (test/stress/time-year.test.ts). Windows sit on the DST
// changes of their zones, on weekday restrictions and on blackout dates.
import { DateTime } from 'luxon';
import { expect } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { offsetChanges } from './time-fixture.js';
import { assertTimedRun, leadZonesOf, type TimedCampaign, type TimedResult, type TimedRun } from './time-scenario.js';

const hm = (h: number, m = 0): number => h * 3600 + m * 60;

/**
 * The year's campaigns: each window crosses, ends in or starts in its zone's changes.
 * Mostly weekend windows (the changes fall on weekends), so a year is ~1,000 open hours.
 */
export const YEAR_CAMPAIGNS: TimedCampaign[] = [
  {
    // Saturday 23:00 – Sunday 02:30 holds both Berlin changes (gap 02–03, repeated 02–03);
    // the early part belongs to Saturday, the only allowed day.
    name: 'berlin-overnight',
    settings: { timezone: 'Europe/Berlin', allowedDays: [6], allowedHoursStart: hm(23), allowedHoursEnd: hm(2, 30), blackoutDates: ['2026-03-21', '2026-10-17', '2026-12-26'] },
    leadZones: [undefined],
  },
  {
    name: 'newyork-gap',
    settings: { timezone: 'America/New_York', allowedDays: [6, 7], allowedHoursStart: hm(1, 30), allowedHoursEnd: hm(3, 15), blackoutDates: ['2026-03-15', '2026-07-04', '2026-11-08'] },
    leadZones: [undefined],
  },
  {
    // Santiago changes at midnight; the person's own hours (other zones) cut the window.
    name: 'santiago-midnight',
    settings: {
      timezone: 'America/Santiago',
      allowedDays: [6, 7],
      allowedHoursStart: hm(23, 15),
      allowedHoursEnd: hm(0, 45),
      blackoutDates: ['2026-09-12', '2026-12-26'],
      leadLocalHours: { start: hm(8, 15), end: hm(21, 45) },
    },
    leadZones: ['Asia/Kathmandu', 'Australia/Lord_Howe', undefined],
  },
  {
    // Lord Howe moves by 30 minutes at 02:00: this window straddles both changes.
    name: 'lordhowe-half-hour',
    settings: { timezone: 'Australia/Lord_Howe', allowedDays: [6, 7], allowedHoursStart: hm(1, 40), allowedHoursEnd: hm(2, 20), blackoutDates: ['2026-10-10'] },
    leadZones: [undefined],
  },
  {
    name: 'kiritimati-weekdays',
    settings: { timezone: 'Pacific/Kiritimati', allowedDays: [1, 2, 3, 4, 5], allowedHoursStart: hm(9), allowedHoursEnd: hm(9, 45), blackoutDates: ['2026-01-01', '2026-03-30', '2026-12-25'] },
    leadZones: [undefined],
  },
  {
    name: 'kathmandu-weekend',
    settings: { timezone: 'Asia/Kathmandu', allowedDays: [6, 7], allowedHoursStart: hm(22, 30), allowedHoursEnd: hm(0, 15), blackoutDates: ['2026-05-02'], leadLocalHours: { start: hm(7), end: hm(22) } },
    leadZones: ['Europe/Berlin', 'America/New_York'],
  },
];

/** A run of the year's campaigns over [from, to). */
export function yearRun(from: number, to: number, factor: number, realTimeoutMs: number, onProgress?: (now: number) => void): TimedRun {
  // Ten-minute retries: leads fall due all over each window (edges included) while a year
  // stays near ten thousand calls (each make_call costs real milliseconds with time frozen).
  const campaigns = YEAR_CAMPAIGNS.map((c) => ({ ...c, settings: { retryIntervalSeconds: 600, ...c.settings } }));
  return { from, to, factor, realTimeoutMs, campaigns, ...(onProgress ? { onProgress } : {}) };
}

/** The local date a call's window occurrence belongs to (the day before, in a past-midnight window's early part). */
export function windowDay(c: CampaignConfig, at: number): DateTime {
  const local = DateTime.fromMillis(at, { zone: c.timezone ?? 'UTC' });
  const sod = local.hour * 3600 + local.minute * 60 + local.second;
  const early = c.allowedHoursEnd < c.allowedHoursStart && sod < c.allowedHoursEnd;
  return early ? local.startOf('day').minus({ days: 1 }) : local.startOf('day');
}

/**
 * Everything the year asserts: the common checks of every harness run, no call on a
 * blackout date or a day not allowed (read per window occurrence), a call on the same
 * weekday a week before each blackout date in range (the blackout is what stopped
 * calls), and calls within six hours of every DST change of each campaign's zone in range.
 */
export function assertYear(run: TimedRun, result: TimedResult): void {
  assertTimedRun(result, leadZonesOf(run), 30 * 60_000);
  for (const tc of run.campaigns) {
    const c = result.configs.get(tc.name)!;
    const calls = result.byCampaign.get(tc.name) ?? [];
    expect(calls.length, `${tc.name} called`).toBeGreaterThan(0);
    const days = new Map<string, number>();
    for (const call of calls) {
      const day = windowDay(c, call.createdAt);
      const iso = day.toISODate()!;
      expect(c.blackoutDates, `${tc.name}: call ${call.id} in the window of blackout date ${iso}`).not.toContain(iso);
      expect(c.allowedDays, `${tc.name}: call ${call.id} in the window of ${iso}, weekday ${day.weekday}`).toContain(day.weekday);
      days.set(iso, (days.get(iso) ?? 0) + 1);
    }
    for (const b of c.blackoutDates) {
      const blackout = DateTime.fromISO(b, { zone: c.timezone ?? 'UTC' });
      const weekBefore = blackout.minus({ days: 7 });
      // Only dates whose week-before window and own window lie inside the run (with a day's margin).
      if (weekBefore.toMillis() < run.from || blackout.plus({ days: 2 }).toMillis() > run.to) continue;
      if (!c.allowedDays.includes(blackout.weekday as never)) continue;
      expect(days.get(weekBefore.toISODate()!) ?? 0, `${tc.name}: calls on ${weekBefore.toISODate()}, a week before blackout ${b}`).toBeGreaterThan(0);
    }
    for (const change of offsetChanges(c.timezone ?? 'UTC', DateTime.fromMillis(run.from).year)) {
      if (change.at - 12 * 3_600_000 < run.from || change.at + 12 * 3_600_000 > run.to) continue;
      const near = result.stretches.filter((s) => s.campaign === tc.name && s.to > change.at - 6 * 3_600_000 && s.from < change.at + 6 * 3_600_000);
      if (near.length === 0) continue; // no window of this campaign near that change (a day not allowed)
      expect(
        near.filter((s) => s.calls > 0).length,
        `${tc.name}: calls in the windows around the change at ${new Date(change.at).toISOString()}`,
      ).toBeGreaterThan(0);
    }
  }
}

/** Which changes a run covers with some open window nearby (for the test's own sanity check). */
export function changesCovered(run: TimedRun, result: TimedResult): string[] {
  const out: string[] = [];
  for (const tc of run.campaigns) {
    const zone = result.configs.get(tc.name)?.timezone ?? 'UTC';
    for (const change of offsetChanges(zone, DateTime.fromMillis(run.from).year)) {
      const near = result.stretches.some((s) => s.campaign === tc.name && s.calls > 0 && s.to > change.at - 6 * 3_600_000 && s.from < change.at + 6 * 3_600_000);
      if (near) out.push(`${tc.name}@${new Date(change.at).toISOString().slice(0, 10)}`);
    }
  }
  return out;
}

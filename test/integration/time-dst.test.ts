// Issue 6, time harness part 1: around every daylight-saving change of 2026 in four zones
// (and a plain day in two odd-offset zones) campaigns whose windows start or end inside
// the gap or the repeated hour, run past midnight, are blacked out, or are cut by the
// person's own hours in another zone. The simulator's record must show every call inside
// both windows with no tolerance, every usable stretch used, and no call on a blackout date.
import { describe, expect, it } from 'vitest';
import type { CampaignConfig, Weekday } from '../../src/config/types.js';
import { nextOpening, windowFromCampaign } from '../../src/time/window.js';
import { localDate, offsetChanges, type OffsetChange } from './time-fixture.js';
import { assertTimedRun, leadZonesOf, runTimed, type TimedCampaign, type TimedRun } from './time-scenario.js';

const DAY_S = 86_400;
const H = 3_600_000;
const ALL: Weekday[] = [1, 2, 3, 4, 5, 6, 7];
/** Simulated ms per real ms: 9 simulated hours (half of them skipped) in about a real second. */
const FACTOR = 30_000;

const mod = (s: number): number => ((s % DAY_S) + DAY_S) % DAY_S;
const hhmm = (s: number): string => `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}`;

/** Middle of the skipped (gap) or repeated wall-clock stretch of a change, seconds of day. */
function middleOfChange(c: OffsetChange): number {
  const delta = Math.abs(c.afterMinutes - c.beforeMinutes) * 60;
  return c.afterMinutes > c.beforeMinutes ? mod(c.wallBefore + delta / 2) : mod(c.wallAfter + delta / 2);
}

/** The campaigns of one scenario: windows placed on the change at `at` in `zone`. */
function campaignsAround(zone: string, at: number, mid: number, leadZone: string, otherLeadZone: string, from: number): TimedCampaign[] {
  const base = { timezone: zone, allowedDays: ALL, blackoutDates: [] as string[] };
  const overnightEnd = mid < 22 * 3600 && mid > 0 && mid < 12 * 3600 ? mid : 2 * 3600 + 30 * 60;
  const overnight = { ...base, allowedHoursStart: 22 * 3600, allowedHoursEnd: overnightEnd };
  const startsInside = { ...base, allowedHoursStart: mid, allowedHoursEnd: mod(mid + 3600) };
  // The overnight window's occurrence in the run starts on this local date.
  const overnightOpening = nextOpening(windowFromCampaign({ ...overnight } as CampaignConfig, zone), from)!;
  const wallOf = (z: string, t: number): number => {
    const d = new Date(t);
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone: z, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(d);
    const get = (k: string): number => Number(parts.find((p) => p.type === k)?.value);
    return get('hour') * 3600 + get('minute') * 60;
  };
  return [
    { name: 'starts-inside', settings: startsInside, leadZones: [undefined] },
    { name: 'ends-inside', settings: { ...base, allowedHoursStart: mod(mid - 2 * 3600), allowedHoursEnd: mid }, leadZones: [undefined] },
    { name: 'overnight', settings: overnight, leadZones: [undefined] },
    { name: 'starts-inside-blackout', settings: { ...startsInside, blackoutDates: [localDate(zone, at)] }, leadZones: [undefined] },
    { name: 'overnight-blackout', settings: { ...overnight, blackoutDates: [localDate(zone, overnightOpening)] }, leadZones: [undefined] },
    {
      // The person's hours (in another zone) open an hour before the change and close an hour after it.
      name: 'lead-hours-elsewhere',
      settings: { ...overnight, leadLocalHours: { start: wallOf(leadZone, at - H), end: wallOf(leadZone, at + H) } },
      leadZones: [leadZone, otherLeadZone],
    },
    {
      // The person's hours start inside their own zone's gap / repeated hour; the campaign's are UTC.
      name: 'lead-hours-inside-change',
      settings: { timezone: 'UTC', allowedDays: ALL, blackoutDates: [], allowedHoursStart: wallOf('UTC', at - 3 * H), allowedHoursEnd: wallOf('UTC', at + 3 * H), leadLocalHours: { start: mid, end: mod(mid + 3600) } },
      leadZones: [zone, otherLeadZone],
    },
  ];
}

interface Scenario {
  title: string;
  zone: string;
  at: number;
  mid: number;
  run: TimedRun;
}

function scenario(zone: string, change: OffsetChange, leadZone: string, otherLeadZone: string): Scenario {
  const mid = middleOfChange(change);
  const from = change.at - 5 * H;
  const kind = change.afterMinutes > change.beforeMinutes ? 'gap' : 'repeated';
  return {
    title: `${zone} ${new Date(change.at).toISOString()} (${kind} around ${hhmm(mid)})`,
    zone,
    at: change.at,
    mid,
    run: { from, to: change.at + 4 * H, factor: FACTOR, realTimeoutMs: 100_000, campaigns: campaignsAround(zone, change.at, mid, leadZone, otherLeadZone, from) },
  };
}

const DST_ZONES: [string, string, string][] = [
  ['Europe/Berlin', 'Asia/Kathmandu', 'America/New_York'],
  ['America/New_York', 'Europe/Berlin', 'Pacific/Kiritimati'],
  ['America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu'],
  ['Australia/Lord_Howe', 'America/Santiago', 'Pacific/Kiritimati'],
];

const scenarios: Scenario[] = DST_ZONES.flatMap(([zone, lead, other]) => offsetChanges(zone, 2026).map((c) => scenario(zone, c, lead, other)));
// Plain days in zones with odd offsets (+05:45, +14:00): a pretend "change" at local 02:00.
for (const [zone, lead, other, day] of [
  ['Asia/Kathmandu', 'Europe/Berlin', 'Pacific/Kiritimati', Date.UTC(2026, 5, 10, 20, 15)],
  ['Pacific/Kiritimati', 'America/Santiago', 'Asia/Kathmandu', Date.UTC(2026, 5, 10, 12, 0)],
] as const) {
  const mid = 2 * 3600 + 30 * 60;
  const from = day - 5 * H;
  scenarios.push({
    title: `${zone} plain day around ${new Date(day).toISOString()}`,
    zone,
    at: day,
    mid,
    run: { from, to: day + 4 * H, factor: FACTOR, realTimeoutMs: 100_000, campaigns: campaignsAround(zone, day, mid, lead, other, from) },
  });
}

describe.concurrent('time harness: daylight-saving changes of 2026', () => {
  it('finds the two changes of 2026 in each zone', () => {
    for (const [zone] of DST_ZONES) expect(offsetChanges(zone, 2026), zone).toHaveLength(2);
    expect(scenarios).toHaveLength(10);
  });

  for (const sc of scenarios) {
    it(`${sc.title}: every call inside both windows, windows used, blackouts honoured`, async () => {
      const result = await runTimed(sc.run);
      assertTimedRun(result, leadZonesOf(sc.run));
      const count = (name: string): number => result.byCampaign.get(name)?.length ?? 0;
      // The blacked-out twins never call; their open twins do.
      expect(count('starts-inside-blackout')).toBe(0);
      expect(count('overnight-blackout')).toBe(0);
      expect(count('starts-inside')).toBeGreaterThan(0);
      expect(count('overnight')).toBeGreaterThan(0);
      expect(count('ends-inside')).toBeGreaterThan(0);
      expect(count('lead-hours-elsewhere')).toBeGreaterThan(0);
      expect(count('lead-hours-inside-change')).toBeGreaterThan(0);
      // The window starting inside the change opened on the change day and was used at its first instant.
      const first = result.stretches.find((s) => s.campaign === 'starts-inside' && s.from >= sc.at - 2 * H);
      expect(first, 'an opening of starts-inside near the change').toBeDefined();
      expect(first!.firstCallAfterMs).not.toBeNull();
      // Within 15 simulated minutes (30 ms of real time at ×30,000): the scaled clock counts
      // each stall of a loaded machine as up to 5 real ms (150 s here), and the first call
      // needs a wake, a pass and make_call; 10 minutes was crossed by 0.8 s once in CI with
      // four test files on 2 cores. A missed opening would wait for the loop's next look
      // (MAX_SLEEP_MS) and still pass either bound: this checks the opening day was used.
      expect(first!.firstCallAfterMs!).toBeLessThan(15 * 60_000);
    }, 120_000);
  }
});

// The time harness of issue 6: a campaign runs on sped-up simulated time across
// daylight-saving changes, and every call the SIMULATOR recorded is judged against the
// windows with no tolerance.
//
// Why a clock of its own (HarnessClock) rather than scaledClock: at a large factor one
// real millisecond of HTTP between the engine's send-time window check and the
// simulator's receipt is many simulated seconds, so a call checked at 03:29:59 would be
// recorded at 03:30:04 — an artefact of the speed-up, not of the engine. The harness
// therefore freezes simulated time from the moment `canSend` is asked until make_call
// answers (the simulator records the very instant the engine judged), and while a read
// is in flight (a slow poll must not look like a stuck call). Closed stretches
// with nothing in progress are skipped with a jump to just before the next opening
// (no timer is skipped: due timers fire at the jump), so a year runs in minutes. And a
// stall of the process (GC, a busy machine) slows simulated time down instead of letting
// minutes pass unseen, which would make calls look stuck to the engine's poller.
//
// Reach: every recorded instant is judged exactly, but the engine takes a few real ms
// from waking to sending, i.e. a few simulated minutes at 30,000×. A DST mistake (an
// hour, Lord Howe's half hour) is caught — reading isOpen with the offset of an hour
// earlier fails all eight change scenarios — while a window opening a minute early may
// not be, as no call need fall into that minute.
//
// This file holds the judging side: the zones' offset changes and rule 1 read a second
// time with luxon. The clock and the driver are in time-clock.ts.
import { DateTime, FixedOffsetZone } from 'luxon';
import type { CampaignConfig } from '../../src/config/types.js';
import type { SimCall } from '../../src/simulator/types.js';
import { isOpen, nextOpening, windowFromCampaign } from '../../src/time/window.js';

/** A change of a zone's UTC offset. */
export interface OffsetChange {
  zone: string;
  /** The first instant of the new offset. */
  at: number;
  beforeMinutes: number;
  afterMinutes: number;
  /** Wall-clock second of day the old offset would show at `at` (where the jump starts). */
  wallBefore: number;
  /** Wall-clock second of day the new offset shows at `at` (where the jump lands). */
  wallAfter: number;
}

const DAY = 86_400_000;
const offsetAt = (zone: string, t: number): number => DateTime.fromMillis(t, { zone }).offset;
const secondsOfDay = (d: DateTime): number => d.hour * 3600 + d.minute * 60 + d.second;

const changeMemo = new Map<string, OffsetChange[]>();

/** Every offset change of `zone` in calendar year `year` (UTC), found with luxon. */
export function offsetChanges(zone: string, year: number): OffsetChange[] {
  const key = `${zone} ${year}`;
  const known = changeMemo.get(key);
  if (known) return known;
  const out: OffsetChange[] = [];
  changeMemo.set(key, out);
  const end = Date.UTC(year + 1, 0, 1);
  // Offsets change at most once a day (months apart in practice): scan days, then bisect.
  for (let t = Date.UTC(year, 0, 1); t < end; t += DAY) {
    const before = offsetAt(zone, t);
    if (offsetAt(zone, t + DAY) === before) continue;
    let lo = t;
    let hi = t + DAY; // offset(lo) = before, offset(hi) = after
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offsetAt(zone, mid) === before) lo = mid;
      else hi = mid;
    }
    const after = offsetAt(zone, hi);
    out.push({
      zone,
      at: hi,
      beforeMinutes: before,
      afterMinutes: after,
      wallBefore: secondsOfDay(DateTime.fromMillis(hi, { zone: FixedOffsetZone.instance(before) })),
      wallAfter: secondsOfDay(DateTime.fromMillis(hi, { zone: FixedOffsetZone.instance(after) })),
    });
  }
  return out;
}

/** Local calendar date `YYYY-MM-DD` of instant `t` in `zone`. */
export function localDate(zone: string, t: number): string {
  return DateTime.fromMillis(t, { zone }).toISODate()!;
}

/**
 * Rule 1 written out a second time, on luxon's reading of the zone (window.ts reads its
 * own offset tables): open iff the local fields are on an allowed, non-blackout day and in
 * [start, end); past midnight the early part belongs to the previous day; equal = all day.
 */
export function oracleOpen(
  w: { timezone: string; days: readonly number[]; start: number; end: number; blackoutDates?: readonly string[] },
  t: number,
): boolean {
  const local = DateTime.fromMillis(t, { zone: w.timezone });
  const sod = secondsOfDay(local) + local.millisecond / 1000;
  const dayOk = (d: DateTime): boolean => w.days.includes(d.weekday) && !(w.blackoutDates ?? []).includes(d.toISODate()!);
  if (w.start === w.end) return dayOk(local);
  if (w.start < w.end) return sod >= w.start && sod < w.end && dayOk(local);
  if (sod >= w.start) return dayOk(local);
  // The calendar day before, read as a date (a day may have 23 or 25 hours).
  return sod < w.end && dayOk(local.startOf('day').minus({ days: 1 }));
}

/** The windows a call of this campaign must have been inside: the campaign's, and the person's. */
export function windowsFor(c: CampaignConfig, leadZone: string | undefined) {
  const zone = c.timezone ?? 'UTC';
  const campaign = { timezone: zone, days: c.allowedDays, start: c.allowedHoursStart, end: c.allowedHoursEnd, blackoutDates: c.blackoutDates };
  const personal = c.leadLocalHours ? { timezone: leadZone ?? zone, days: [1, 2, 3, 4, 5, 6, 7] as const, start: c.leadLocalHours.start, end: c.leadLocalHours.end } : null;
  return { campaign, personal };
}

/** Throws for the first call whose `initiated` instant is outside a window (window.ts and the oracle both). */
export function assertCallsInsideWindows(calls: readonly SimCall[], c: CampaignConfig, leadZones: ReadonlyMap<string, string>): void {
  const spec = windowFromCampaign(c, c.timezone ?? 'UTC');
  for (const call of calls) {
    const initiated = call.timeline.find((e) => e.status === 'initiated')?.at;
    if (initiated === undefined) throw new Error(`call ${call.id} has no initiated entry`);
    const zone = leadZones.get(call.client_phone_number);
    const { campaign, personal } = windowsFor(c, zone);
    const where = `call ${call.id} to ${call.client_phone_number} of ${c.name}, initiated ${new Date(initiated).toISOString()} (${DateTime.fromMillis(initiated, { zone: campaign.timezone }).toISO()} campaign time)`;
    if (!isOpen(spec, initiated)) throw new Error(`rule 1 (window.ts): ${where} while the campaign window was closed`);
    if (!oracleOpen(campaign, initiated)) throw new Error(`rule 1 (luxon oracle): ${where} while the campaign window was closed`);
    if (personal && !oracleOpen(personal, initiated)) {
      throw new Error(`rule 1 (luxon oracle): ${where} outside lead_local_hours in ${personal.timezone} (${DateTime.fromMillis(initiated, { zone: personal.timezone }).toISO()})`);
    }
  }
}

/** Earliest next opening over campaigns, from `t` (null if none within window.ts's horizon). */
export function nextOpeningOf(campaigns: readonly CampaignConfig[], t: number): number | null {
  let best: number | null = null;
  for (const c of campaigns) {
    const n = nextOpening(windowFromCampaign(c, c.timezone ?? 'UTC'), t);
    if (n !== null && (best === null || n < best)) best = n;
  }
  return best;
}

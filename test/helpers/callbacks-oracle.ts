// An oracle for callbacks the person asks for (README, "Callbacks"), independent of src/engine,
// src/time and src/rules: it imports nothing of campaignd. A phrase is read with chrono-node
// (English and German, ISO 8601 with and without an offset) in the person's zone, with luxon
// turning the wall-clock reading into an instant; when calls may start comes from wall-clock.ts
// (Intl), and the first allowed moment after an asked time from luxon's local openings. Judged
// from the simulator's own record of the calls: what each call extracted, when the next one
// to the same number was placed.
import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import { insideWallWindow, type WallWindow } from './wall-clock.js';

/** One call as the simulator recorded it (GET /__sim/conversations). */
export interface OracleCall {
  callId: number;
  phone: string;
  placedAt: number;
  endedAt: number | null;
  /** Whether a person answered (only then did they ask for anything). */
  answered: boolean;
  extracted: Record<string, unknown>;
}

/** Where and when one number may be called, and how its callbacks are bounded. */
export interface OracleLead {
  phone: string;
  /** The person's zone (the lead's timezone column): callback phrases are read in it. */
  zone: string;
  /** The campaign's calling window, in the campaign's zone. */
  window: WallWindow;
  /** `lead_local_hours` in the person's zone, seconds after local midnight (start < end). */
  localHours?: { start: number; end: number };
  /** The campaign calling it: a late callback is judged against that campaign's other calls (busyGapMs). */
  campaign?: string;
}

export interface OracleSettings {
  /** The extracted variable holding the asked time (`callbacks.variable`). */
  variable: string;
  maxPerLead: number;
  horizonDays: number;
  /** How long after the first allowed moment a callback may start (the engine's pace, in simulated ms). */
  toleranceMs: number;
  /** The run's last simulated instant: a callback due after it (less the tolerance) is not judged. */
  runEnd: number;
  /**
   * When many callbacks fall due at one opening, the last of them start only as the campaign's
   * slots and rate budget allow, and on a sped-up clock a slow store stretches that queue. With
   * this set, a callback later than the tolerance still passes if its campaign was working
   * through a queue all along: from the first allowed moment to its call, the campaign placed a
   * call at least every `busyGapMs`, and no fresh lead (a number's first call) of the campaign
   * went ahead of it once it had been due for `busyGapMs`. Without it, later than the tolerance is late.
   */
  busyGapMs?: number;
}

export type Reading = { kind: 'unreadable' } | { kind: 'time'; at: number };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The instant a phrase names, read at `ref` in `zone`, or unreadable. Wall-clock phrases
 * ("tomorrow at 3 pm", "morgen um 15 Uhr", "2026-12-01T15:00") are read on a floating clock
 * showing the person's local time and then placed in the zone by luxon, so a day across a DST
 * change keeps its 15:00; a phrase that fixes the instant itself (an offset, "in 2 hours") is
 * taken as chrono reads it against the real instant. Of the English and the German reading the
 * one covering more of the phrase wins (the other often reads a bare "9:30" out of it).
 */
export function readPhrase(phrase: unknown, ref: number, zone: string): Reading {
  if (typeof phrase !== 'string' || phrase.trim() === '') return { kind: 'unreadable' };
  const local = DateTime.fromMillis(ref, { zone });
  const floating = new Date(Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second));
  let best: { result: chrono.ParsedResult; parser: chrono.Chrono } | null = null;
  for (const parser of [chrono.en.casual, chrono.de.casual]) {
    const result = parser.parse(phrase, { instant: floating, timezone: 0 }, { forwardDate: true })[0];
    if (result && (!best || result.text.length > best.result.text.length)) best = { result, parser };
  }
  if (!best) return { kind: 'unreadable' };
  if (best.result.start.isCertain('timezoneOffset')) {
    // The phrase fixes the instant: an explicit offset, or a span from now.
    const real = best.parser.parse(phrase, { instant: new Date(ref), timezone: 0 }, { forwardDate: true })[0];
    return real ? { kind: 'time', at: real.start.date().getTime() } : { kind: 'unreadable' };
  }
  const wall = best.result.start.date();
  const at = DateTime.fromObject(
    { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate(), hour: wall.getUTCHours(), minute: wall.getUTCMinutes(), second: wall.getUTCSeconds() },
    { zone },
  );
  return at.isValid ? { kind: 'time', at: at.toMillis() } : { kind: 'unreadable' };
}

/** Whether a call to `lead` may start at `t`: inside the campaign's window and the person's hours. */
export function allowedAt(lead: OracleLead, t: number): boolean {
  if (!insideWallWindow(lead.window, t)) return false;
  if (!lead.localHours) return true;
  return insideWallWindow({ timezone: lead.zone, days: [1, 2, 3, 4, 5, 6, 7], start: lead.localHours.start, end: lead.localHours.end }, t);
}

/**
 * The first moment at or after `t` a call to `lead` may start, within `limitDays`. The allowed
 * moments are the intersection of two unions of local intervals, so the first of them is `t`
 * itself or one of the openings (the campaign's, the person's) after it: each opening is
 * built with luxon in its own zone, day by day, and tried in time order.
 */
export function firstAllowedAtOrAfter(lead: OracleLead, t: number, limitDays = 40): number | null {
  if (allowedAt(lead, t)) return t;
  const openings: number[] = [];
  const add = (zone: string, startSeconds: number) => {
    const first = DateTime.fromMillis(t, { zone }).startOf('day').minus({ days: 1 });
    for (let d = 0; d <= limitDays + 1; d++) {
      const day = first.plus({ days: d });
      const at = day.set({ hour: Math.floor(startSeconds / 3600), minute: Math.floor((startSeconds % 3600) / 60), second: startSeconds % 60 }).toMillis();
      if (at > t) openings.push(at);
    }
  };
  add(lead.window.timezone, lead.window.start);
  if (lead.localHours) add(lead.zone, lead.localHours.start);
  openings.sort((a, b) => a - b);
  return openings.find((at) => allowedAt(lead, at)) ?? null;
}

/** What the judge found; `problems` empty means the run kept every rule. */
export interface Judgement {
  problems: string[];
  /** Callbacks placed where they were due, and how late after the first allowed moment (ms). */
  placed: number;
  lateness: number[];
  /** Asked times moved to a later allowed moment (outside the window or the person's hours). */
  moved: number;
  refusedUnreadable: number;
  refusedBeyondHorizon: number;
  refusedOverMax: number;
  /** Asks that the judge leaves alone: due after the run, in the past, or on the horizon's edge. */
  unjudged: number;
  /** Answered calls that asked nothing. */
  noAsk: number;
  /** Of `placed`, those later than the tolerance, behind a queue of their campaign's calls (busyGapMs). */
  queued: number;
}

/**
 * Judges the calls of a run in which a number is called again only for a callback (the
 * campaign has no retries and every call is answered): per number, in the order placed, each
 * call after the first must be the callback the previous call asked for, placed at the first
 * allowed moment at or after the asked time (within the tolerance, never before it), inside
 * the rules, and no more than `maxPerLead` of them; an ask that is unreadable, beyond the
 * horizon or over the maximum gets no call; a readable one within the horizon and the
 * maximum gets exactly one.
 */
export function judgeCallbacks(calls: readonly OracleCall[], leads: readonly OracleLead[], s: OracleSettings): Judgement {
  const j: Judgement = { problems: [], placed: 0, lateness: [], moved: 0, refusedUnreadable: 0, refusedBeyondHorizon: 0, refusedOverMax: 0, unjudged: 0, noAsk: 0, queued: 0 };
  const byPhone = new Map<string, OracleCall[]>();
  for (const c of [...calls].sort((a, b) => a.placedAt - b.placedAt || a.callId - b.callId)) {
    const list = byPhone.get(c.phone) ?? [];
    list.push(c);
    byPhone.set(c.phone, list);
  }
  const leadOf = new Map(leads.map((l) => [l.phone, l]));
  const queue = campaignPlacements(byPhone, leadOf);
  const iso = (t: number, zone: string) => `${new Date(t).toISOString()} (${DateTime.fromMillis(t, { zone }).toFormat('ccc HH:mm:ss ZZZZ')})`;
  for (const [phone, list] of byPhone) {
    const lead = leadOf.get(phone);
    if (!lead) {
      j.problems.push(`${phone}: called, but not a lead of the run`);
      continue;
    }
    const fail = (msg: string) => j.problems.push(`${phone} (${lead.zone}): ${msg}`);
    for (const call of list) if (!allowedAt(lead, call.placedAt)) fail(`call ${call.callId} placed at ${iso(call.placedAt, lead.zone)}, outside the rules`);
    if (list.length - 1 > s.maxPerLead) fail(`${list.length - 1} callbacks placed, at most ${s.maxPerLead} allowed`);
    for (let i = 0; i < list.length; i++) {
      const call = list[i]!;
      const next = list[i + 1];
      const phrase = call.answered ? call.extracted[s.variable] : undefined;
      if (call.endedAt === null) {
        if (next) fail(`call ${next.callId} placed while call ${call.callId} had not ended`);
        continue;
      }
      if (phrase === undefined || phrase === null || phrase === '') {
        j.noAsk++;
        if (next) fail(`call ${next.callId} at ${iso(next.placedAt, lead.zone)} follows call ${call.callId}, which asked for no callback`);
        continue;
      }
      const reading = readPhrase(phrase, call.endedAt, lead.zone);
      const said = `call ${call.callId} (ended ${iso(call.endedAt, lead.zone)}) asked "${String(phrase)}"`;
      if (reading.kind === 'unreadable') {
        j.refusedUnreadable++;
        if (next) fail(`${said}, which cannot be read, yet call ${next.callId} was placed at ${iso(next.placedAt, lead.zone)}`);
        continue;
      }
      const ahead = reading.at - call.endedAt;
      if (ahead <= 0 || Math.abs(ahead - s.horizonDays * DAY) < DAY) {
        // In the past, or on the horizon's edge (measured from the end or from the decision): either answer is fair.
        j.unjudged++;
        continue;
      }
      if (ahead > s.horizonDays * DAY) {
        j.refusedBeyondHorizon++;
        if (next) fail(`${said}, ${iso(reading.at, lead.zone)}, beyond the ${s.horizonDays}-day horizon, yet call ${next.callId} was placed at ${iso(next.placedAt, lead.zone)}`);
        continue;
      }
      if (i >= s.maxPerLead) {
        j.refusedOverMax++;
        if (next) fail(`${said} after ${i} callbacks (max ${s.maxPerLead}), yet call ${next.callId} was placed`);
        continue;
      }
      const due = firstAllowedAtOrAfter(lead, reading.at);
      if (due === null || due + s.toleranceMs > s.runEnd) {
        j.unjudged++;
        continue;
      }
      if (due !== reading.at) j.moved++;
      const why = due === reading.at ? `due ${iso(due, lead.zone)}` : `asked for ${iso(reading.at, lead.zone)}, first allowed ${iso(due, lead.zone)}`;
      if (!next) {
        fail(`${said}: ${why}, but no callback was placed`);
        continue;
      }
      if (next.placedAt < due) fail(`${said}: ${why}, but call ${next.callId} was placed earlier, at ${iso(next.placedAt, lead.zone)}`);
      else if (next.placedAt > due + s.toleranceMs) {
        const notBusy = s.busyGapMs === undefined || lead.campaign === undefined ? 'no queue allowed for' : whyNotQueued(queue.get(lead.campaign) ?? [], due, next.placedAt, s, (t) => iso(t, lead.zone));
        if (notBusy !== null) fail(`${said}: ${why}, but call ${next.callId} was placed only at ${iso(next.placedAt, lead.zone)} (${notBusy})`);
        else {
          j.placed++;
          j.queued++;
          j.lateness.push(next.placedAt - due);
        }
      } else {
        j.placed++;
        j.lateness.push(next.placedAt - due);
      }
    }
  }
  return j;
}

/** Each campaign's calls by the time placed, and whether each was its number's first (a fresh lead). */
function campaignPlacements(byPhone: ReadonlyMap<string, OracleCall[]>, leadOf: ReadonlyMap<string, OracleLead>): Map<string, { at: number; fresh: boolean }[]> {
  const out = new Map<string, { at: number; fresh: boolean }[]>();
  for (const [phone, list] of byPhone) {
    const campaign = leadOf.get(phone)?.campaign;
    if (campaign === undefined) continue;
    const mine = out.get(campaign) ?? [];
    list.forEach((c, i) => mine.push({ at: c.placedAt, fresh: i === 0 }));
    out.set(campaign, mine);
  }
  for (const mine of out.values()) mine.sort((a, b) => a.at - b.at);
  return out;
}

/** Null when the campaign worked through a queue from `due` to `placedAt` (see OracleSettings.busyGapMs), else why not. */
function whyNotQueued(placements: readonly { at: number; fresh: boolean }[], due: number, placedAt: number, s: OracleSettings, iso: (t: number) => string): string | null {
  const gap = s.busyGapMs!;
  let last = due;
  for (const p of placements) {
    if (p.at < due) continue;
    if (p.at >= placedAt) break;
    if (p.at - last > gap) return `its campaign placed nothing from ${iso(last)} to ${iso(p.at)}`;
    // A pass claims the due callbacks first; a fresh lead placed well inside the wait went ahead
    // of it. Not in the first busyGapMs: a callback asked on a webhook is scheduled only once
    // the call list confirms who answered, which on a sped-up clock takes simulated minutes.
    if (p.fresh && p.at > due + gap && p.at < placedAt - s.toleranceMs) return `a fresh lead of its campaign was called at ${iso(p.at)}, ahead of it`;
    last = p.at;
  }
  return placedAt - last > gap ? `its campaign placed nothing from ${iso(last)} to ${iso(placedAt)}` : null;
}

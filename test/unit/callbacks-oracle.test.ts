// The callbacks oracle's judge (test/helpers/callbacks-oracle.ts) on records written by hand:
// a right run passes; a callback placed twice, too early, too late, outside the window, for an
// unreadable or too distant time, or beyond max_per_lead fails. The phrase reading keeps a
// local 15:00 across a DST change and "in 2 hours" as two real hours.
import { describe, expect, it } from 'vitest';
import { CALLBACK_PHRASES } from '../../src/simulator/conversations.js';
import { firstAllowedAtOrAfter, judgeCallbacks, readPhrase, type OracleCall, type OracleLead, type OracleSettings } from '../helpers/callbacks-oracle.js';

const PHONE = '+4915112340001';
const WEEKDAYS = [1, 2, 3, 4, 5];
const lead: OracleLead = { phone: PHONE, zone: 'Europe/Berlin', window: { timezone: 'Europe/Berlin', days: WEEKDAYS, start: 9 * 3600, end: 18 * 3600 } };
const settings: OracleSettings = { variable: 'callback_at', maxPerLead: 2, horizonDays: 30, toleranceMs: 5 * 60_000, runEnd: Date.UTC(2026, 11, 31) };
const MIN = 60_000;
// Thursday 22 October 2026, 10:00 in Berlin (CEST, +02:00).
const THU_10 = Date.UTC(2026, 9, 22, 8, 0);
// Friday 23 October, 15:00 in Berlin.
const FRI_15 = Date.UTC(2026, 9, 23, 13, 0);

let nextId = 1;
function call(placedAt: number, ask?: string, talkMs = 60_000): OracleCall {
  return { callId: nextId++, phone: PHONE, placedAt, endedAt: placedAt + talkMs, answered: true, extracted: ask === undefined ? { interest: 'no' } : { callback_at: ask } };
}
const judge = (calls: OracleCall[], l: OracleLead = lead) => judgeCallbacks(calls, [l], settings);

describe('callbacks oracle: reading the asked time', () => {
  it('reads English, German and ISO 8601 in the person’s zone, and refuses what says no time', () => {
    expect(readPhrase('tomorrow at 3 pm', THU_10, 'Europe/Berlin')).toEqual({ kind: 'time', at: FRI_15 });
    expect(readPhrase('morgen um 15 Uhr', THU_10, 'Europe/Berlin')).toEqual({ kind: 'time', at: FRI_15 });
    expect(readPhrase('übermorgen um 9:30', THU_10, 'Europe/Berlin')).toEqual({ kind: 'time', at: Date.UTC(2026, 9, 24, 7, 30) });
    expect(readPhrase('tomorrow at 3 pm', THU_10, 'America/Chicago')).toEqual({ kind: 'time', at: Date.UTC(2026, 9, 23, 20, 0) }); // 15:00 CDT (-05:00) on Friday
    expect(readPhrase('2026-12-01T15:00', THU_10, 'Europe/Berlin')).toEqual({ kind: 'time', at: Date.UTC(2026, 11, 1, 14, 0) });
    expect(readPhrase('2026-12-01T15:00+01:00', THU_10, 'America/New_York')).toEqual({ kind: 'time', at: Date.UTC(2026, 11, 1, 14, 0) });
    expect(readPhrase('in 2 hours', THU_10, 'Asia/Kolkata')).toEqual({ kind: 'time', at: THU_10 + 2 * 3_600_000 });
    expect(readPhrase('in 2 Stunden', THU_10, 'Europe/Berlin')).toEqual({ kind: 'time', at: THU_10 + 2 * 3_600_000 });
    for (const p of ['whenever', 'nach dem Urlaub', 'irgendwann', '', 42]) expect(readPhrase(p, THU_10, 'Europe/Berlin')).toEqual({ kind: 'unreadable' });
  });

  it("reads every phrase the simulator's people say, except the ones meant to say no time", () => {
    const unreadable = new Set(['whenever', 'some other time', 'nach dem Urlaub', 'irgendwann']);
    for (const phrase of [...CALLBACK_PHRASES.en, ...CALLBACK_PHRASES.de].map((p) => p.replace('{date}', '2026-10-25'))) {
      expect(readPhrase(phrase, THU_10, 'Europe/Berlin').kind, phrase).toBe(unreadable.has(phrase) ? 'unreadable' : 'time');
    }
  });

  it('keeps the local time across a DST change, and a span as real hours', () => {
    // Saturday 24 October 10:00 CEST; Sunday the 25th is on CET (+01:00).
    const sat10 = Date.UTC(2026, 9, 24, 8, 0);
    expect(readPhrase('tomorrow at 3 pm', sat10, 'Europe/Berlin')).toEqual({ kind: 'time', at: Date.UTC(2026, 9, 25, 14, 0) });
    // Sunday 01:30 CEST, then 02:00 CEST becomes 02:00 CET: two real hours later is 02:30 CET.
    const sun0130 = Date.UTC(2026, 9, 24, 23, 30);
    expect(readPhrase('in 2 hours', sun0130, 'Europe/Berlin')).toEqual({ kind: 'time', at: Date.UTC(2026, 9, 25, 1, 30) });
  });

  it('moves a time outside the rules to the first allowed moment, in both zones', () => {
    // Thursday 23:00 in Berlin: Friday's opening.
    expect(firstAllowedAtOrAfter(lead, Date.UTC(2026, 9, 22, 21, 0))).toBe(Date.UTC(2026, 9, 23, 7, 0));
    // Friday 19:00: Monday 09:00, after the DST change (CET).
    expect(firstAllowedAtOrAfter(lead, Date.UTC(2026, 9, 23, 17, 0))).toBe(Date.UTC(2026, 9, 26, 8, 0));
    // A person in Kolkata (09:00–20:00 there) called by a Sydney campaign (10:00–18:00, AEDT +11): 09:00 IST is 14:30 in Sydney.
    const kolkata: OracleLead = { phone: PHONE, zone: 'Asia/Kolkata', window: { timezone: 'Australia/Sydney', days: [1, 2, 3, 4, 5, 6, 7], start: 10 * 3600, end: 18 * 3600 }, localHours: { start: 9 * 3600, end: 20 * 3600 } };
    expect(firstAllowedAtOrAfter(kolkata, Date.UTC(2026, 9, 22, 2, 30))).toBe(Date.UTC(2026, 9, 22, 3, 30));
  });
});

describe('callbacks oracle: judging a run', () => {
  it('passes a callback placed at the asked moment, and one moved to the next opening', () => {
    const right = judge([call(THU_10, 'tomorrow at 3 pm'), call(FRI_15 + 30_000)]);
    expect(right.problems).toEqual([]);
    expect(right.placed).toBe(1);
    const moved = judge([call(THU_10, 'tonight at 11 pm'), call(Date.UTC(2026, 9, 23, 7, 0) + 20_000)]);
    expect(moved.problems).toEqual([]);
    expect(moved.moved).toBe(1);
    expect(judge([call(THU_10, 'whenever')]).problems).toEqual([]);
  });

  it('fails a callback placed twice, too early, too late or never', () => {
    expect(judge([call(THU_10, 'tomorrow at 3 pm'), call(FRI_15 + 30_000), call(FRI_15 + 10 * MIN)]).problems.join('\n')).toMatch(/asked for no callback/);
    expect(judge([call(THU_10, 'tomorrow at 3 pm'), call(FRI_15 - MIN)]).problems.join('\n')).toMatch(/placed earlier/);
    expect(judge([call(THU_10, 'tomorrow at 3 pm'), call(FRI_15 + 60 * MIN)]).problems.join('\n')).toMatch(/placed only at/);
    expect(judge([call(THU_10, 'tomorrow at 3 pm')]).problems.join('\n')).toMatch(/no callback was placed/);
  });

  it('fails a callback placed outside the window (at the asked time instead of the next opening)', () => {
    const r = judge([call(THU_10, 'tonight at 11 pm'), call(Date.UTC(2026, 9, 22, 21, 0))]);
    expect(r.problems.join('\n')).toMatch(/outside the rules/);
    expect(r.problems.join('\n')).toMatch(/placed earlier/);
  });

  it('fails a callback for an unreadable time, one beyond the horizon, and one over max_per_lead', () => {
    expect(judge([call(THU_10, 'nach dem Urlaub'), call(FRI_15)]).problems.join('\n')).toMatch(/cannot be read/);
    expect(judge([call(THU_10, 'in 45 days'), call(Date.UTC(2026, 11, 7, 9, 0))]).problems.join('\n')).toMatch(/beyond the 30-day horizon/);
    const chain = [call(THU_10, 'tomorrow at 3 pm'), call(FRI_15, 'next Monday at 10:30'), call(Date.UTC(2026, 9, 26, 9, 30), 'tomorrow at 3 pm'), call(Date.UTC(2026, 9, 27, 14, 0))];
    const over = judge(chain);
    expect(over.problems.join('\n')).toMatch(/after 2 callbacks \(max 2\)/);
    expect(over.problems.join('\n')).toMatch(/3 callbacks placed, at most 2/);
    expect(judge(chain.slice(0, 3)).problems).toEqual([]);
  });

  it('lets a late callback pass only behind a queue of its campaign: calls all along, no fresh lead ahead of it', () => {
    const queued = { ...settings, busyGapMs: 10 * MIN };
    const mine: OracleLead = { ...lead, campaign: 'c' };
    // Other numbers of the campaign: each called once before (so a later call is not a fresh lead's).
    const others = Array.from({ length: 12 }, (_, i) => `+49151123400${String(10 + i)}`);
    const other = (phone: string, placedAt: number): OracleCall => ({ ...call(placedAt), phone });
    const leads = [mine, ...others.map((phone): OracleLead => ({ ...lead, phone, campaign: 'c' }))];
    const asked = [call(THU_10, 'tomorrow at 3 pm')];
    const earlier = others.map((phone) => other(phone, THU_10 + MIN));
    const late = call(FRI_15 + 60 * MIN);
    const mineOnly = (r: ReturnType<typeof judgeCallbacks>) => r.problems.filter((p) => p.startsWith(PHONE));
    // From 15:00 to 16:00 the campaign placed a call every 5 minutes: the queue excuses the hour.
    const busy = others.map((phone, i) => other(phone, FRI_15 + (i + 1) * 5 * MIN - 30_000));
    const ok = judgeCallbacks([...asked, ...earlier, ...busy, late], leads, queued);
    expect(mineOnly(ok)).toEqual([]);
    expect(ok.queued).toBe(1);
    // The same hour without the setting: late.
    expect(mineOnly(judgeCallbacks([...asked, ...earlier, ...busy, late], leads, settings)).join('\n')).toMatch(/placed only at/);
    // A 20-minute lull inside the wait: not a queue.
    const lull = busy.filter((c) => c.placedAt < FRI_15 + 20 * MIN || c.placedAt > FRI_15 + 40 * MIN);
    expect(mineOnly(judgeCallbacks([...asked, ...earlier, ...lull, late], leads, queued)).join('\n')).toMatch(/its campaign placed nothing from/);
    // A fresh lead (a number's first call) called in the middle of the wait went ahead of it.
    const fresh: OracleLead = { ...lead, phone: '+4915112349999', campaign: 'c' };
    const withFresh = judgeCallbacks([...asked, ...earlier, ...busy, { ...call(FRI_15 + 30 * MIN), phone: fresh.phone }, late], [...leads, fresh], queued);
    expect(mineOnly(withFresh).join('\n')).toMatch(/a fresh lead of its campaign was called/);
  });
});


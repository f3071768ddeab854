// Who may be called (docs/design.md §11), regional calling rules: the rules file parser, the rule gates, and a year of
// the shipped US example against leads in every US zone, Alaska, Hawaii, Puerto Rico and
// multi-zone area codes, judged against an oracle written here with luxon wall-clock
// fields and date-holidays' calendars (not the engine's window code).
import path from 'node:path';
import { DateTime } from 'luxon';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPersonWindow, numberRegions, personZones } from '../../src/rules/person-window.js';
import { parseRulesText, readRulesFile } from '../../src/config/calling-rules.js';
import { regionRuleGate } from '../../src/rules/region-gate.js';
import type { RegionRule } from '../../src/rules/types.js';
import { windowFromCampaign } from '../../src/time/window.js';
import type { CampaignConfig } from '../../src/config/types.js';
import { oracleOpen, PEOPLE } from '../helpers/calling-rules-oracle.js';

const US_RULES = path.join(import.meta.dirname, '../../config/calling-rules/us.yaml');
const utc = (s: string): number => DateTime.fromISO(s, { zone: 'utc' }).toMillis();
const at = (local: string, zone: string): number => DateTime.fromISO(local, { zone }).toMillis();

let rules: RegionRule[] = [];
beforeAll(async () => {
  const read = await readRulesFile(US_RULES);
  expect(read.problems).toEqual([]);
  rules = read.rules!;
});
const rule = (region: string): RegionRule => rules.find((r) => r.region === region)!;

describe('the rules file', () => {
  it('reports every problem with its line and field, and a fix', () => {
    const text = ['rules:', '  - region: US-TX', '    hours: { start: "21:00", end: "09:00" }', '  - region: texas', '    public_holidays: yes', '  - hours: { start: "08:00", end: "20:00" }', '  - region: ZZ-QQ', '    public_holidays: true', ''].join('\n');
    const { rules: parsed, problems } = parseRulesText('/x/rules.yaml', text);
    expect(parsed).toBeUndefined();
    const brief = problems.map((p) => `${p.line}:${p.field}: ${p.message}`);
    expect(brief).toEqual([
      '3:rules[0].hours.end: must be later than start (rules never run past midnight)',
      expect.stringMatching(/^4:rules\[1\]\.region: "texas" is not a valid region/),
      expect.stringMatching(/^5:rules\[1\]\.public_holidays: must be true or false/),
      expect.stringMatching(/^6:rules\[2\]\.region: missing required field/),
      '7:rules[3].region: date-holidays has no calendar for ZZ-QQ',
    ]);
    for (const p of problems) {
      expect(p.file).toBe('/x/rules.yaml');
      expect(p.hint ?? '').not.toBe('');
    }
  });

  it('reads the shipped US example: every rule names its source', () => {
    expect(rules.map((r) => r.region)).toEqual(['US', 'PR', 'VI', 'GU', 'US-FL', 'US-OK', 'US-MD', 'US-TX', 'US-LA', 'US-AL', 'US-MS']);
    for (const r of rules) expect(r.source, r.region).toBeTruthy();
    expect(rule('US-FL').maxAttemptsPerNumber).toEqual({ count: 3, windowHours: 24 });
  });
});

describe('rule gates', () => {
  it('Texas: 9–21, Sunday only from noon (local wall clock)', () => {
    const tx = regionRuleGate(rule('US-TX'), 'America/Chicago');
    expect(tx.isOpen(at('2026-09-05T08:59:59', 'America/Chicago'))).toBe(false); // Saturday
    expect(tx.isOpen(at('2026-09-05T09:00:00', 'America/Chicago'))).toBe(true);
    expect(tx.isOpen(at('2026-09-06T11:59:00', 'America/Chicago'))).toBe(false); // Sunday
    expect(tx.nextOpening(at('2026-09-06T09:30:00', 'America/Chicago'))).toBe(at('2026-09-06T12:00:00', 'America/Chicago'));
    expect(tx.isOpen(at('2026-09-06T20:59:00', 'America/Chicago'))).toBe(true);
    expect(tx.isOpen(at('2026-09-06T21:00:00', 'America/Chicago'))).toBe(false);
  });

  it('Louisiana: no Sundays and no state holidays (Labor Day 2026-09-07), by its own calendar', () => {
    const la = regionRuleGate(rule('US-LA'), 'America/Chicago');
    expect(la.isOpen(at('2026-09-06T12:00:00', 'America/Chicago'))).toBe(false);
    expect(la.isOpen(at('2026-09-07T12:00:00', 'America/Chicago'))).toBe(false);
    expect(la.nextOpening(at('2026-09-05T20:00:00', 'America/Chicago'))).toBe(at('2026-09-08T08:00:00', 'America/Chicago'));
    // Texas has no holiday rule: Labor Day is an ordinary Monday there.
    expect(regionRuleGate(rule('US-TX'), 'America/Chicago').isOpen(at('2026-09-07T12:00:00', 'America/Chicago'))).toBe(true);
  });

  it('a number spanning two zones opens when the later one does, and rules of its state apply with the federal one', () => {
    const campaign = windowFromCampaign({ allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0, blackoutDates: [] } as unknown as CampaignConfig, 'UTC');
    const policy = { rules, caps: [] };
    const make = (phone: string) => {
      const z = personZones(phone, null, 'UTC');
      return buildPersonWindow({ campaignZone: 'UTC', campaignWindow: campaign, policy }, z.zones, z.source, numberRegions(phone));
    };
    const idaho = make('+12082001234'); // Boise (Mountain) and Los Angeles (Pacific)
    expect(idaho.zones).toEqual(['America/Boise', 'America/Los_Angeles']);
    expect(idaho.rules.map((r) => r.region)).toEqual(['US']);
    expect(idaho.nextOpening(utc('2026-06-01T12:00:00'))).toBe(utc('2026-06-01T15:00:00')); // 08:00 PDT
    expect(idaho.closedBy(utc('2026-06-01T14:30:00'))?.label).toContain('in America/Los_Angeles');
    const florida = make('+13055550100');
    expect(florida.caps.map((c) => `${c.count}/${c.windowHours}h ${c.origin}`)).toEqual(['3/24h calling rule US-FL (Fla. Stat. § 501.616(6))']);
    expect(florida.isOpen(at('2026-06-01T20:30:00', 'America/New_York'))).toBe(false); // federal allows, Florida does not
  });
});

// --- a year of the US example, against an oracle of wall-clock fields -----------------

describe('a year of the US example (2026), every 30 minutes and minute by minute on transition days', () => {
  it('agrees with the oracle at every instant, and nextOpening lands on the first open instant', () => {
    const campaign = windowFromCampaign({ allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0, blackoutDates: [] } as unknown as CampaignConfig, 'UTC');
    const policy = { rules, caps: [] };
    const instants: number[] = [];
    for (let t = utc('2026-01-01T00:00:00'); t < utc('2027-01-01T00:00:00'); t += 30 * 60_000) instants.push(t);
    // Transition days (US DST 2026-03-08 / 11-01; Labor Day, Thanksgiving, Christmas; New Year).
    for (const day of ['2026-03-07', '2026-03-08', '2026-03-09', '2026-10-31', '2026-11-01', '2026-11-02', '2026-09-07', '2026-11-26', '2026-12-25', '2026-12-31']) {
      for (let t = utc(`${day}T00:00:00`); t < utc(`${day}T00:00:00`) + 36 * 3600_000; t += 60_000) instants.push(t);
    }
    instants.sort((a, b) => a - b);
    let checked = 0;
    for (const p of PEOPLE) {
      const z = personZones(p.phone, null, 'UTC');
      expect(z.zones, p.phone).toEqual(p.zones);
      expect(numberRegions(p.phone).filter((r) => rules.some((x) => x.region === r)), p.phone).toEqual(p.regions);
      const person = buildPersonWindow({ campaignZone: 'UTC', campaignWindow: campaign, policy }, z.zones, z.source, numberRegions(p.phone));
      let expectedNext: number | null = null;
      for (const t of instants) {
        const want = oracleOpen(rules, p, t);
        const got = person.isOpen(t);
        if (got !== want) throw new Error(`${p.phone} at ${new Date(t).toISOString()}: isOpen ${got}, oracle ${want}`);
        if (!want) {
          // Every instant up to the next opening is closed; the opening itself is open.
          if (expectedNext === null || expectedNext <= t) {
            expectedNext = person.nextOpening(t);
            if (expectedNext === null) throw new Error(`${p.phone}: no opening after ${new Date(t).toISOString()}`);
            if (!oracleOpen(rules, p, expectedNext) || oracleOpen(rules, p, expectedNext - 1000)) throw new Error(`${p.phone}: nextOpening ${new Date(expectedNext).toISOString()} is not the start of an open stretch`);
          }
        } else if (expectedNext !== null && t < expectedNext) {
          throw new Error(`${p.phone}: open at ${new Date(t).toISOString()} before the promised opening ${new Date(expectedNext).toISOString()}`);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(PEOPLE.length * 17_000);
  }, 120_000);
});

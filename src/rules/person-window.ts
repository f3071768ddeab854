// The called person's side of rule 1 and docs/design.md §11: in which zone(s) they may be, which
// regional rules apply to their number, and so which gates must all be open to call them.
// Built per (campaign, zones, regions) and memoised by the campaign, since a million
// leads share a few hundred such combinations.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { nanpSubdivisions, zonesForNumber } from '../phone-zones/lookup.js';
import { leadLocalWindow, type WindowSpec } from '../time/window.js';
import { firstClosed, nextOpeningOfAll, windowGate, type Gate } from './gate.js';
import { regionRuleGate } from './region-gate.js';
import type { AttemptCap, CallingPolicy, RegionRule } from './types.js';

/** Where the zones came from: the lead's timezone column, its number, or (neither) the campaign. */
export type ZoneSource = 'lead' | 'number' | 'campaign';

export interface PersonWindow {
  zones: readonly string[];
  zoneSource: ZoneSource;
  /** Regions of the number: its country, and a US state / Canadian province from the area code. */
  regions: readonly string[];
  /** Rules that apply to the number. */
  rules: readonly RegionRule[];
  /** The person's own gates (lead_local_hours and rules, in each zone); the campaign window is not among them. */
  gates: readonly Gate[];
  /** Every cap on attempts to the number: the campaign's and daemon's, and its rules'. */
  caps: readonly AttemptCap[];
  isOpen(at: number): boolean;
  /** The first of the person's gates closed at `at`, or null. */
  closedBy(at: number): Gate | null;
  /** Next instant at which the campaign window and every gate of the person are open together. */
  nextOpening(from: number): number | null;
}

export interface PersonInputs {
  campaignZone: string;
  campaignWindow: WindowSpec;
  leadLocalHours?: { start: number; end: number } | undefined;
  policy: CallingPolicy;
}

/** Zones for a lead: its timezone column, else its number, else the campaign's zone. */
export function personZones(phone: string, leadZone: string | null, campaignZone: string): { zones: readonly string[]; source: ZoneSource } {
  if (leadZone) return { zones: [leadZone], source: 'lead' };
  const zones = zonesForNumber(phone);
  return zones.length > 0 ? { zones, source: 'number' } : { zones: [campaignZone], source: 'campaign' };
}

const countryMemo = new Map<string, string | null>();

/** ISO country and subdivisions of a number (`+1 512…` → [US, US-TX]). */
export function numberRegions(phone: string): readonly string[] {
  const subdivisions = nanpSubdivisions(phone);
  if (subdivisions.length > 0) return [...new Set(subdivisions.map((s) => s.slice(0, 2))), ...subdivisions];
  // NANP members elsewhere share the country code; their area code says the country.
  const key = phone.startsWith('+1') ? phone.slice(0, 5) : phone;
  let country = countryMemo.get(key);
  if (country === undefined) {
    country = parsePhoneNumberFromString(phone)?.country ?? null;
    if (countryMemo.size > 50_000) countryMemo.clear();
    countryMemo.set(key, country);
  }
  return country ? [country] : [];
}

/** The rules of `policy` that apply to a number in `regions` (a country rule applies to its subdivisions too). */
export function rulesFor(policy: CallingPolicy, regions: readonly string[]): RegionRule[] {
  if (policy.rules.length === 0 || regions.length === 0) return [];
  return policy.rules.filter((r) => regions.includes(r.region));
}

/** Builds the person window of one zones × regions combination. */
export function buildPersonWindow(inputs: PersonInputs, zones: readonly string[], zoneSource: ZoneSource, regions: readonly string[]): PersonWindow {
  const rules = rulesFor(inputs.policy, regions);
  const gates: Gate[] = [];
  if (inputs.leadLocalHours) {
    for (const z of zones) gates.push(windowGate(leadLocalWindow(inputs.leadLocalHours, z), `lead_local_hours in ${z}`));
  }
  for (const rule of rules) for (const z of zones) gates.push(regionRuleGate(rule, z));
  const caps: AttemptCap[] = [...inputs.policy.caps];
  for (const r of rules) {
    if (r.maxAttemptsPerNumber) caps.push({ ...r.maxAttemptsPerNumber, origin: `calling rule ${r.region}${r.source ? ` (${r.source})` : ''}` });
  }
  const campaignGate = windowGate(inputs.campaignWindow, 'campaign window');
  const all = [campaignGate, ...gates];
  return {
    zones,
    zoneSource,
    regions,
    rules,
    gates,
    caps,
    isOpen: (at) => firstClosed(gates, at) === null,
    closedBy: (at) => firstClosed(gates, at),
    nextOpening: (from) => nextOpeningOfAll(all, from),
  };
}

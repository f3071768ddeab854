// The called person's zone(s) and region(s) from their number (docs/design.md §11).
// Tables come from prefix-zones.data.ts (generated from libphonenumber, see NOTICE.md);
// they are decoded once, on first use, into maps keyed by digit prefixes.
import { NANP_AREA_REGIONS, ZONE_NAMES, ZONE_PREFIXES } from './prefix-zones.data.js';

let zoneTable: Map<string, readonly string[]> | null = null;
let longestPrefix = 0;
let areaTable: Map<string, readonly string[]> | null = null;

function zones(): Map<string, readonly string[]> {
  if (zoneTable) return zoneTable;
  const table = new Map<string, readonly string[]>();
  for (const entry of ZONE_PREFIXES.split(';')) {
    const [prefix, list] = entry.split(':') as [string, string];
    table.set(prefix, Object.freeze(list.split(',').map((i) => ZONE_NAMES[parseInt(i, 36)]!)));
    longestPrefix = Math.max(longestPrefix, prefix.length);
  }
  return (zoneTable = table);
}

function areas(): Map<string, readonly string[]> {
  if (areaTable) return areaTable;
  const table = new Map<string, readonly string[]>();
  for (const entry of NANP_AREA_REGIONS.split(';')) {
    const [area, list] = entry.split(':') as [string, string];
    table.set(area, Object.freeze(list.split(',')));
  }
  return (areaTable = table);
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The IANA zones where a number's owner may be: the longest prefix of its E.164 digits
 * found in the table wins (`+1 208 201…` → Denver, `+1 208 2…` → Boise and Los Angeles).
 * Empty when no prefix is known (the caller falls back to the campaign's zone).
 */
export function zonesForNumber(e164: string): readonly string[] {
  const table = zones();
  const digits = e164.startsWith('+') ? e164.slice(1) : e164;
  for (let len = Math.min(digits.length, longestPrefix); len > 0; len--) {
    const found = table.get(digits.slice(0, len));
    if (found) return found;
  }
  return NONE;
}

/**
 * The US states or Canadian provinces (ISO 3166-2, `US-TX`, `CA-ON`) of a +1 number's area
 * code; several where an area code spans provinces (902: NS and PE). Empty for other
 * numbers and for NANP members outside the US and Canada (their country is the region).
 */
export function nanpSubdivisions(e164: string): readonly string[] {
  if (!e164.startsWith('+1') || e164.length < 5) return NONE;
  return areas().get(e164.slice(2, 5)) ?? NONE;
}

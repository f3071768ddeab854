// Regenerates src/phone-zones/prefix-zones.data.ts from the public libphonenumber data
// (google/libphonenumber resources/timezones/map_data.txt and resources/geocoding/en/1.txt,
// Apache-2.0; source commit and licence in src/phone-zones/NOTICE.md), saved in DATA_DIR as
// libphonenumber-timezones-map_data.txt and libphonenumber-geocoding-en-1.txt. Run it when
// that data is updated:
//
//   npx tsx scripts/derive-phone-zones.ts [DATA_DIR]      (default ../shared/data)
//
// The default is where the maintainers keep their copy, beside the repository; anyone else
// passes DATA_DIR.
// Nothing at run time reads DATA_DIR: the generated module is the daemon's only copy.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const dataDir = path.resolve(process.argv[2] ?? path.join(root, '..', 'shared', 'data'));
const out = path.join(root, 'src', 'phone-zones', 'prefix-zones.data.ts');

/** `prefix|value` lines of a libphonenumber resource file (comments and blanks skipped). */
function readMap(file: string): [string, string][] {
  const rows: [string, string][] = [];
  for (const [i, raw] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const bar = line.indexOf('|');
    const prefix = line.slice(0, bar);
    if (bar < 1 || !/^\d+$/.test(prefix)) throw new Error(`${file}:${i + 1}: expected "digits|value", got ${JSON.stringify(line)}`);
    rows.push([prefix, line.slice(bar + 1)]);
  }
  return rows;
}

// --- prefix → zones -----------------------------------------------------------------
const zoneRows = readMap(path.join(dataDir, 'libphonenumber-timezones-map_data.txt'));
const zoneNames = [...new Set(zoneRows.flatMap(([, v]) => v.split('&')))].sort();
for (const z of zoneNames) {
  // Every zone must be one this Node's ICU knows, or the daemon could not judge its hours.
  try {
    new Intl.DateTimeFormat('en', { timeZone: z });
  } catch {
    throw new Error(`zone ${z} of the data is not known to this Node's ICU`);
  }
}
const zoneIndex = new Map(zoneNames.map((z, i) => [z, i]));
const prefixes = zoneRows
  .map(([p, v]) => `${p}:${v.split('&').map((z) => zoneIndex.get(z)!.toString(36)).join(',')}`)
  .join(';');

// --- NANP area code → US state / Canadian province ------------------------------------
const US: Record<string, string> = {
  Alabama: 'AL', Alaska: 'AK', Arizona: 'AZ', Arkansas: 'AR', California: 'CA', Colorado: 'CO', Connecticut: 'CT', Delaware: 'DE',
  Florida: 'FL', Georgia: 'GA', Hawaii: 'HI', Idaho: 'ID', Illinois: 'IL', Indiana: 'IN', Iowa: 'IA', Kansas: 'KS', Kentucky: 'KY',
  Louisiana: 'LA', Maine: 'ME', Maryland: 'MD', Massachusetts: 'MA', Michigan: 'MI', Minnesota: 'MN', Mississippi: 'MS', Missouri: 'MO',
  Montana: 'MT', Nebraska: 'NE', Nevada: 'NV', 'New Hampshire': 'NH', 'New Jersey': 'NJ', 'New Mexico': 'NM', 'New York': 'NY',
  'North Carolina': 'NC', 'North Dakota': 'ND', Ohio: 'OH', Oklahoma: 'OK', Oregon: 'OR', Pennsylvania: 'PA', 'Rhode Island': 'RI',
  'South Carolina': 'SC', 'South Dakota': 'SD', Tennessee: 'TN', Texas: 'TX', Utah: 'UT', Vermont: 'VT', Virginia: 'VA',
  'Washington State': 'WA', Washington: 'WA', 'Washington D.C.': 'DC', 'West Virginia': 'WV', Wisconsin: 'WI', Wyoming: 'WY',
};
const CA: Record<string, string> = {
  Alberta: 'AB', 'British Columbia': 'BC', 'British Colombia': 'BC', Manitoba: 'MB', 'New Brunswick': 'NB', 'Newfoundland and Labrador': 'NL',
  'Nova Scotia': 'NS', 'Prince Edward Island': 'PE', Ontario: 'ON', Quebec: 'QC', Saskatchewan: 'SK', 'Northwest Territories': 'NT',
  Nunavut: 'NU', Yukon: 'YT',
};
const US_CODES = new Set(Object.values(US));
const CA_CODES = new Set(Object.values(CA));

/** "New Jersey" → [US-NJ]; "Nova Scotia/Prince Edward Island" → [CA-NS, CA-PE]; "Jersey City, NJ" → [US-NJ]. */
function regionsOf(name: string): string[] | null {
  const parts = name.split('/').map((s) => s.trim());
  const found: string[] = [];
  for (const part of parts) {
    const abbr = /,\s*([A-Z]{2})$/.exec(part)?.[1];
    if (abbr && US_CODES.has(abbr)) found.push(`US-${abbr}`);
    else if (abbr && CA_CODES.has(abbr)) found.push(`CA-${abbr}`);
    else if (US[part]) found.push(`US-${US[part]}`);
    else if (CA[part]) found.push(`CA-${CA[part]}`);
    else return null;
  }
  return found;
}

const geoRows = readMap(path.join(dataDir, 'libphonenumber-geocoding-en-1.txt'));
const byArea = new Map<string, { own?: string[]; finer: Set<string>; unknown: Set<string> }>();
for (const [prefix, name] of geoRows) {
  if (prefix.length < 4) continue;
  const area = prefix.slice(1, 4);
  const entry = byArea.get(area) ?? { finer: new Set<string>(), unknown: new Set<string>() };
  byArea.set(area, entry);
  const regions = regionsOf(name);
  if (prefix.length === 4) {
    if (!regions) throw new Error(`area code ${area}: region "${name}" is not a US state or Canadian province this script knows; add it`);
    entry.own = regions;
  } else if (regions) for (const r of regions) entry.finer.add(r);
  else entry.unknown.add(name);
}
const areaRegions: string[] = [];
const skipped: string[] = [];
for (const [area, entry] of [...byArea].sort(([a], [b]) => a.localeCompare(b))) {
  // An area code's own line names its region; without one, the regions of its finer
  // lines (cities with a state suffix) stand for it.
  const regions = entry.own ?? [...entry.finer].sort();
  if (regions.length === 0) {
    skipped.push(`${area} (${[...entry.unknown].slice(0, 2).join('; ')})`);
    continue;
  }
  areaRegions.push(`${area}:${regions.join(',')}`);
}

const header = `// GENERATED by scripts/derive-phone-zones.ts — do not edit; rerun the script instead.
//
// Derived from libphonenumber (https://github.com/google/libphonenumber), commit
// f7e3e88c92b905c8d6edb81f336dbe25edc05b52: resources/timezones/map_data.txt (prefix → zones)
// and resources/geocoding/en/1.txt (NANP area code → US state / Canadian province).
// Copyright (C) 2011-2012 The Libphonenumber Authors. Licensed under the Apache License,
// Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0); see NOTICE.md in this folder.
// Changes: re-encoded compactly; area codes reduced to their state or province.
// The data is statistical, not authoritative.
`;
const body = `${header}
/** IANA zones referenced by ZONE_PREFIXES (by base-36 index). */
export const ZONE_NAMES: readonly string[] = ${JSON.stringify(zoneNames)};

/** \`digits:i,j;…\` — an E.164 prefix (without +) and the base-36 indexes of its zones. */
export const ZONE_PREFIXES = ${JSON.stringify(prefixes)};

/** \`area:REGION,…;…\` — a NANP area code and its ISO 3166-2 regions (US-XX, CA-XX). */
export const NANP_AREA_REGIONS = ${JSON.stringify(areaRegions.join(';'))};
`;
fs.writeFileSync(out, body);
console.log(`${path.relative(root, out)}: ${zoneRows.length} prefixes, ${zoneNames.length} zones, ${areaRegions.length} area codes`);
if (skipped.length > 0) console.log(`area codes without a known region (left out): ${skipped.join(', ')}`);

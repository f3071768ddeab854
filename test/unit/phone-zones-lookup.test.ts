import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nanpSubdivisions, zonesForNumber } from '../../src/phone-zones/lookup.js';
import { numberRegions, personZones } from '../../src/rules/person-window.js';

describe('zonesForNumber: longest prefix of the E.164 digits', () => {
  it('reads one zone for a single-zone area code', () => {
    expect(zonesForNumber('+12025550100')).toEqual(['America/New_York']);
    expect(zonesForNumber('+15125550100')).toEqual(['America/Chicago']);
    expect(zonesForNumber('+18085550100')).toEqual(['Pacific/Honolulu']);
    expect(zonesForNumber('+17875550100')).toEqual(['America/Puerto_Rico']);
    expect(zonesForNumber('+493012345678')).toEqual(['Europe/Berlin']);
  });

  it('keeps every zone of a multi-zone prefix, and a longer prefix beats a shorter one', () => {
    // 1208 2… spans Boise and Los Angeles; 1208 201 is Denver only (map_data.txt).
    expect(zonesForNumber('+12082001234')).toEqual(['America/Boise', 'America/Los_Angeles']);
    expect(zonesForNumber('+12082551234')).toEqual(['America/Los_Angeles']);
    expect(zonesForNumber('+12082011234')).toEqual(['America/Denver']);
    expect(zonesForNumber('+19075550100')).toEqual(['America/Adak', 'America/Anchorage']);
  });

  it('maps an unknown prefix to no zone, and the person then uses the campaign zone', () => {
    expect(zonesForNumber('+80055501234')).toEqual([]);
    expect(personZones('+80055501234', null, 'Europe/Paris')).toEqual({ zones: ['Europe/Paris'], source: 'campaign' });
    expect(personZones('+12025550100', null, 'Europe/Paris')).toEqual({ zones: ['America/New_York'], source: 'number' });
    expect(personZones('+12025550100', 'Asia/Tokyo', 'Europe/Paris')).toEqual({ zones: ['Asia/Tokyo'], source: 'lead' });
  });

  it('agrees with every line of the source data (where the generator input is present)', () => {
    const file = new URL('../../../shared/data/libphonenumber-timezones-map_data.txt', import.meta.url);
    if (!fs.existsSync(file)) return; // the generated table is checked against its source where the source exists
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => /^\d+\|/.test(l));
    expect(lines.length).toBeGreaterThan(3000);
    for (const line of lines) {
      const [prefix, zones] = line.split('|') as [string, string];
      // A number that is exactly the prefix plus digits no longer prefix knows.
      expect(zonesForNumber(`+${prefix}`), prefix).toEqual(zones.split('&'));
    }
  });
});

describe('regions of a number', () => {
  it('gives the US state or Canadian province of the area code, with the country', () => {
    expect(nanpSubdivisions('+15125550100')).toEqual(['US-TX']);
    expect(numberRegions('+15125550100')).toEqual(['US', 'US-TX']);
    expect(numberRegions('+14165550100')).toEqual(['CA', 'CA-ON']);
    // 902 serves Nova Scotia and Prince Edward Island: both provinces' rules apply.
    expect(numberRegions('+19025550100')).toEqual(['CA', 'CA-NS', 'CA-PE']);
  });

  it('falls back to the country for other numbers', () => {
    expect(nanpSubdivisions('+493012345678')).toEqual([]);
    expect(numberRegions('+493012345678')).toEqual(['DE']);
    expect(numberRegions('+17875550123')).toEqual(['PR']);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LeadFileError, readLeadCsv, type ReadLeadResult } from '../../src/leads/read-leads.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-leads-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
async function read(text: string, opts: { defaultCountry?: string } = {}): Promise<ReadLeadResult[]> {
  const file = path.join(dir, `leads-${n++}.csv`);
  fs.writeFileSync(file, text);
  const out: ReadLeadResult[] = [];
  for await (const r of readLeadCsv(file, opts)) out.push(r);
  return out;
}

describe('readLeadCsv', () => {
  it('normalises numbers, splits out timezone and secondaries, keeps the rest as variables', async () => {
    const rows = await read(
      '\uFEFFphone_number,first_name,timezone,secondary_phone_number_2,secondary_phone_number_1,note\r\n' +
        '+1 555 555 0100,Ada,America/New_York,+4915100000002,+4915100000001,"likes tea, not coffee"\r\n',
    );
    expect(rows).toEqual([
      {
        ok: true,
        line: 2,
        lead: {
          phoneNumber: '+15555550100',
          secondary: ['+4915100000001', '+4915100000002'],
          timezone: 'America/New_York',
          variables: { first_name: 'Ada', note: 'likes tea, not coffee' },
        },
      },
    ]);
  });

  it('reports bad rows with their physical line and reason, never stopping', async () => {
    const rows = await read('phone_number,name\n+15555550100,a\n\n"12",b\nnot a number,"multi\nline"\n+15555550101,c\n');
    expect(rows.map((r) => (r.ok ? [r.line, r.lead.phoneNumber] : [r.line, r.reason, r.phoneText]))).toEqual([
      [2, '+15555550100'],
      [4, 'national number without a country: add a country column or default_country', '12'],
      [5, 'not a phone number', 'not a number'],
      [7, '+15555550101'],
    ]);
    const bad = rows[2];
    expect(bad && !bad.ok && bad.variables).toEqual({ name: 'multi\nline' });
  });

  it('reads national numbers with default_country, and a country column wins per row', async () => {
    const rows = await read('phone_number,country\n030 1234567,\n(555) 555-0123,US\n030 7654321,XX\n', { defaultCountry: 'DE' });
    expect(rows.map((r) => (r.ok ? r.lead.phoneNumber : r.reason))).toEqual(['+49301234567', '+15555550123', 'unknown country "XX"']);
    // The country column is read for the number, not passed on as a variable.
    expect(rows[1]?.ok && rows[1].lead.variables).toEqual({});
  });

  it('makes a row with an unknown timezone invalid', async () => {
    const rows = await read('phone_number,timezone\n+15555550100,Mars/Olympus\n+15555550101,\n');
    expect(rows[0]).toMatchObject({ ok: false, line: 2, reason: 'unknown timezone "Mars/Olympus"' });
    expect(rows[1]).toMatchObject({ ok: true, lead: { phoneNumber: '+15555550101' } });
    expect(rows[1]?.ok && 'timezone' in rows[1].lead).toBe(false);
  });

  it('skips a bad or repeated secondary number with a warning, keeping the lead', async () => {
    const rows = await read('phone_number,secondary_phone_number_1,secondary_phone_number_2,secondary_phone_number_3\n+15555550100,123,+15555550100,+15555550102\n');
    expect(rows[0]).toEqual({
      ok: true,
      line: 2,
      lead: { phoneNumber: '+15555550100', secondary: ['+15555550102'], variables: {} },
      warnings: [
        'secondary_phone_number_1 skipped: national number without a country: add a country column or default_country',
        'secondary_phone_number_2 skipped: same number as an earlier contact',
      ],
    });
  });

  it('matches header names loosely and tolerates short and long rows', async () => {
    const rows = await read(' Phone_Number ,Name\n+15555550100\n+15555550101,b,extra\n');
    expect(rows.map((r) => r.ok && r.lead.variables)).toEqual([{ Name: '' }, { Name: 'b' }]);
  });

  it('throws with the file name, the headers found and the mapping to write when no column holds the phone number', async () => {
    await expect(read('nummer,name\n+15555550100,a\n')).rejects.toThrow(
      /leads-\d+\.csv: no phone number column in the header row \(found: "nummer", "name"\): name it, e\.g\. --map "phone_number=nummer", or in the campaign file lead_columns: \{ phone_number: "nummer" \}/,
    );
    await expect(read('')).rejects.toBeInstanceOf(LeadFileError);
  });

  it('throws with the file name when the file is missing', async () => {
    const gen = readLeadCsv(path.join(dir, 'missing.csv'));
    await expect(gen.next()).rejects.toThrow(/missing\.csv: no such lead file/);
  });
});

import { describe, expect, it } from 'vitest';
import { ColumnError, headerKey, mapText, mergeColumns, parseMapOption, planColumns } from '../../src/leads/columns.js';

describe('planColumns without a mapping', () => {
  it("keeps campaignd's own names", () => {
    const plan = planColumns(['phone_number', 'first_name', 'timezone', 'secondary_phone_number_2', 'secondary_phone_number_1', 'country']);
    expect(plan.phone).toBe(0);
    expect(plan.timezone).toBe(2);
    expect(plan.country).toBe(5);
    expect(plan.secondary.map((s) => s.name)).toEqual(['secondary_phone_number_1', 'secondary_phone_number_2']);
    expect(plan.variables.map((v) => v.name)).toEqual(['first_name']);
    expect(plan.choice.phone_number).toEqual({ column: 'phone_number', how: 'named' });
  });

  it.each([['Phone'], ['PHONE NUMBER'], ['Telefon'], ['Telefonnummer'], ['Handy'], ['Tel.'], ['Numéro'], ['Téléphone'], ['mobile'], ['Phone_Number']])(
    'recognises %s as the phone number, case- and accent-insensitively',
    (header) => {
      const plan = planColumns(['Name', header, 'TZ', 'Land']);
      expect(plan.phone).toBe(1);
      expect(plan.choice.phone_number.how).toBe(header === 'Phone_Number' ? 'named' : 'recognised');
      expect(plan.choice.timezone).toEqual({ column: 'TZ', how: 'recognised' });
      expect(plan.choice.country).toEqual({ column: 'Land', how: 'recognised' });
      // A column taken for a role is not also a variable.
      expect(plan.variables.map((v) => v.name)).toEqual(['Name']);
      expect(plan.choice.variables).toEqual({ Name: 'Name' });
    },
  );

  it('passes a column taken for a role on as a variable when the mapping names it as one', () => {
    const plan = planColumns(['Phone', 'Land', 'Vorname'], { variables: { country: 'Land' } });
    expect(plan.choice.country).toEqual({ column: 'Land', how: 'recognised' });
    expect(plan.variables).toEqual([
      { index: 1, name: 'country' },
      { index: 2, name: 'Vorname' },
    ]);
  });

  it('refuses two phone-like columns, listing them and the mapping to write', () => {
    expect(() => planColumns(['Name', 'Phone', 'Mobile'])).toThrow(ColumnError);
    expect(() => planColumns(['Name', 'Phone', 'Mobile'])).toThrow(
      'several columns could hold the phone number: "Phone", "Mobile". Say which is the number to call and which are secondary contacts, e.g. --map "phone_number=Phone,secondary_phone_numbers=Mobile", or in the campaign file lead_columns: { phone_number: "Phone", secondary_phone_numbers: ["Mobile"] }',
    );
  });

  it('refuses a header without a phone column, listing the headers found and the mapping to write', () => {
    expect(() => planColumns(['Kunde', 'Rufnr', 'Stadt'])).toThrow(
      'no phone number column in the header row (found: "Kunde", "Rufnr", "Stadt"): name it, e.g. --map "phone_number=Kunde", or in the campaign file lead_columns: { phone_number: "Kunde" }',
    );
    expect(() => planColumns(['Kunde', 'Nummer'])).toThrow('--map "phone_number=Nummer"');
  });

  it('refuses a header named twice', () => {
    expect(() => planColumns(['Phone', 'Name', 'name'])).toThrow('column "name" appears twice in the header row (columns 2 and 3)');
  });
});

describe('planColumns with a mapping', () => {
  it('takes the mapped headers (matched ignoring case and accents) and renames mapped variables', () => {
    const plan = planColumns(['Telefon', 'Handy', 'Büro', 'Vorname', 'Zone', 'Notiz'], {
      phone_number: 'telefon',
      secondary_phone_numbers: ['BURO', 'Handy'],
      timezone: 'Zone',
      variables: { first_name: 'Vorname' },
    });
    expect(plan.phone).toBe(0);
    expect(plan.secondary).toEqual([
      { index: 2, name: 'Büro' },
      { index: 1, name: 'Handy' },
    ]);
    expect(plan.timezone).toBe(4);
    expect(plan.variables).toEqual([
      { index: 3, name: 'first_name' },
      { index: 5, name: 'Notiz' },
    ]);
    expect(plan.choice).toEqual({
      phone_number: { column: 'Telefon', how: 'mapped' },
      timezone: { column: 'Zone', how: 'mapped' },
      secondary_phone_numbers: ['Büro', 'Handy'],
      variables: { first_name: 'Vorname', Notiz: 'Notiz' },
    });
  });

  it('names the mapping and the headers found when a mapped header is missing', () => {
    expect(() => planColumns(['Phone', 'Name'], { phone_number: 'Phone', variables: { first_name: 'Vorname' } }, 'lead_columns in spring.yaml')).toThrow(
      'column "Vorname" (variables.first_name in lead_columns in spring.yaml) is not in the header row (found: "Phone", "Name")',
    );
  });
});

describe('--map', () => {
  it('parses FIELD=COLUMN pairs, | between secondary columns, variables.NAME', () => {
    const m = parseMapOption(['phone_number=Phone,timezone=TZ,secondary_phone_numbers=Mobile|Work', 'variables.first_name=Vorname,country=Land']);
    expect(m).toEqual({ phone_number: 'Phone', timezone: 'TZ', country: 'Land', secondary_phone_numbers: ['Mobile', 'Work'], variables: { first_name: 'Vorname' } });
    expect(mapText(m)).toBe('phone_number=Phone,timezone=TZ,country=Land,secondary_phone_numbers=Mobile|Work,variables.first_name=Vorname');
  });

  it('refuses unknown fields and pairs without a column', () => {
    expect(() => parseMapOption(['phone=Phone'])).toThrow('--map: unknown field "phone"');
    expect(() => parseMapOption(['phone_number'])).toThrow('--map "phone_number" names no column');
    expect(() => parseMapOption(['phone_number='])).toThrow('names no column');
  });

  it('goes on top of lead_columns: named fields replace, variables merge', () => {
    expect(mergeColumns({ phone_number: 'A', variables: { x: 'X' } }, { phone_number: 'B', variables: { y: 'Y' } })).toEqual({ phone_number: 'B', variables: { x: 'X', y: 'Y' } });
    expect(mergeColumns(undefined, { phone_number: 'B' })).toEqual({ phone_number: 'B' });
    expect(headerKey(' Téléphone-Nr. ')).toBe('telephonenr');
  });
});

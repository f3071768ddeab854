import { describe, expect, it } from 'vitest';
import { readTypedNumber } from '../../src/leads/typed-number.js';

describe('readTypedNumber (explain, suppress)', () => {
  it('reads + numbers as they are, whatever the campaigns', () => {
    expect(readTypedNumber('+1 415 555 0101', undefined, ['DE'])).toEqual({ ok: true, e164: '+14155550101' });
  });

  it("reads a national number in the campaigns' country, or in --country when given", () => {
    expect(readTypedNumber('(415) 555-0101', undefined, ['US'])).toEqual({ ok: true, e164: '+14155550101' });
    expect(readTypedNumber('(415) 555-0101', undefined, ['CA', 'US'])).toEqual({ ok: true, e164: '+14155550101' });
    expect(readTypedNumber('030 1234567', 'DE', ['US'])).toEqual({ ok: true, e164: '+49301234567' });
  });

  it('takes the one reading in an assigned range, and refuses several readings naming the --country of each', () => {
    expect(readTypedNumber('030 1234567', undefined, ['DE', 'US'])).toEqual({ ok: true, e164: '+49301234567' });
    const both = readTypedNumber('(415) 555-0101', undefined, ['DE', 'US']);
    expect(both.ok).toBe(false);
    expect(!both.ok && both.reason).toContain('+494155550101 (--country DE), +14155550101 (--country US); pass --country to say which');
  });

  it('names --country when no campaign has a country or none reads the number', () => {
    expect(readTypedNumber('(415) 555-0101', undefined, [])).toMatchObject({ ok: false, reason: expect.stringContaining('pass --country CC') });
    expect(readTypedNumber('12', undefined, ['DE', 'US'])).toEqual({
      ok: false,
      reason: "too short for DE; too short for US (read in the campaigns' default_country DE, US): pass --country CC for another country, or write it with + and the country code",
    });
    expect(readTypedNumber('nope', undefined, ['US'])).toEqual({ ok: false, reason: 'not a phone number' });
  });
});

import { describe, expect, it } from 'vitest';
import { isE164, normalisePhone } from '../../src/leads/phone.js';

describe('normalisePhone', () => {
  it.each([
    ['+15555550123', undefined, '+15555550123'],
    ['+1 (555) 555-0123', undefined, '+15555550123'],
    ['+49 30 1234567', undefined, '+49301234567'],
    ['+49 (0)30 1234567', undefined, '+49301234567'],
    ['+4915102000001', undefined, '+4915102000001'],
    ['+44 20 7946 0958', undefined, '+442079460958'],
    ['030 1234567', 'DE', '+49301234567'],
    ['030 1234567', 'de', '+49301234567'],
    ['0049 30 1234567', 'DE', '+49301234567'],
    ['(555) 555-0123', 'US', '+15555550123'],
    ['1 555 555 0123', 'US', '+15555550123'],
    ['+49 30 1234567', 'US', '+49301234567'],
  ])('%s (country %s) → %s', (text, country, e164) => {
    expect(normalisePhone(text, country)).toEqual({ ok: true, e164 });
  });

  it.each([
    ['', undefined, 'missing phone number'],
    ['   ', 'DE', 'missing phone number'],
    ['abc', undefined, 'not a phone number'],
    ['call +4915112345678', undefined, 'not a phone number'],
    ['+', undefined, 'not a phone number'],
    ['030 1234567', undefined, 'national number without a country: add a country column or default_country'],
    ['030 1234567', 'XX', 'unknown country "XX"'],
    ['+999123456', undefined, 'unknown country calling code'],
    ['12', 'DE', 'too short for DE'],
    ['+49123', undefined, 'too short for DE'],
    ['+1555555012345678', undefined, 'too long for +1'],
  ])('%s (country %s) is rejected: %s', (text, country, reason) => {
    const { needsCountry, ...rest } = normalisePhone(text, country) as { needsCountry?: true };
    expect(rest).toEqual({ ok: false, reason });
    // Marked, so that a command can name its own fix (--country) instead of the lead file's.
    expect(needsCountry).toBe(reason.startsWith('national number without a country') ? true : undefined);
  });

  it('keeps the reason free of the number, so rows group by reason', () => {
    const a = normalisePhone('+49123');
    const b = normalisePhone('+49124');
    expect(a).toEqual(b);
  });

  it('accepts the fast path and the full parser alike for canonical numbers', () => {
    for (const n of ['+15555550100', '+4915102000001', '+33612345678', '+819012345678', '+61412345678']) {
      const r = normalisePhone(n);
      expect(r).toEqual({ ok: true, e164: n });
      expect(isE164(n)).toBe(true);
    }
    expect(isE164('0301234567')).toBe(false);
  });
});

import { isSupportedCountry, parsePhoneNumberWithError, ParseError, validatePhoneNumberLength, type CountryCode } from 'libphonenumber-js';

export type PhoneResult = { ok: true; e164: string } | { ok: false; reason: string };

// Only what people type into a phone column: digits and the usual separators. Without
// this check libphonenumber would happily dig a number out of "call me at +49 …".
const PHONE_CHARS = /^\+?[\d\s().\-/]+$/;

/**
 * Normalises a number to E.164. `+` numbers are read internationally; national numbers
 * need a country (ISO 3166 alpha-2). Reasons are short and free of the number itself so
 * that an import summary can group rows by reason.
 */
export function normalisePhone(text: string, defaultCountry?: string): PhoneResult {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'missing phone number' };
  if (!PHONE_CHARS.test(trimmed) || !/\d/.test(trimmed)) return { ok: false, reason: 'not a phone number' };

  const international = trimmed.startsWith('+');
  let country: CountryCode | undefined;
  if (!international) {
    const wanted = defaultCountry?.trim().toUpperCase();
    if (!wanted) return { ok: false, reason: 'national number without a country: add a country column or default_country' };
    if (!isSupportedCountry(wanted)) return { ok: false, reason: `unknown country "${wanted}"` };
    country = wanted;
  }

  try {
    const parsed = parsePhoneNumberWithError(trimmed, country);
    const where = parsed.country ?? country ?? `+${parsed.countryCallingCode}`;
    // isPossible (length fits the country) rather than isValid (number range assigned):
    // test and fictional ranges such as +1 555 are dialled on purpose.
    if (!parsed.isPossible()) return { ok: false, reason: lengthReason(validatePhoneNumberLength(trimmed, country), where) };
    return { ok: true, e164: parsed.number };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, reason: parseErrorReason(err.message, international, country) };
    throw err;
  }
}

/** True when `text` is already a canonical E.164 number (what the store keeps). */
export function isE164(text: string): boolean {
  return /^\+[1-9]\d{1,14}$/.test(text);
}

function parseErrorReason(code: string, international: boolean, country: string | undefined): string {
  switch (code) {
    case 'NOT_A_NUMBER':
      return 'not a phone number';
    case 'INVALID_COUNTRY':
      return international ? 'unknown country calling code' : `not a number of ${country ?? 'the given country'}`;
    case 'TOO_SHORT':
      return `too short${country ? ` for ${country}` : ''}`;
    case 'TOO_LONG':
      return `too long${country ? ` for ${country}` : ''}`;
    default:
      return 'not a phone number';
  }
}

function lengthReason(verdict: string | undefined, where: string): string {
  switch (verdict) {
    case 'TOO_SHORT':
      return `too short for ${where}`;
    case 'TOO_LONG':
      return `too long for ${where}`;
    default:
      return `wrong length for ${where}`;
  }
}

import { isSupportedCountry, isValidPhoneNumber, parsePhoneNumberWithError, ParseError, PhoneNumber, getCountryCallingCode, validatePhoneNumberLength, type CountryCode, type E164Number } from 'libphonenumber-js';

/** `needsCountry`: a national number read without a country (the reason's hint is the lead file's; a command names its own). */
export type PhoneResult = { ok: true; e164: string } | { ok: false; reason: string; needsCountry?: true };

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
  if (international) {
    const fast = fastInternational(trimmed);
    if (fast) return { ok: true, e164: fast };
  }
  let country: CountryCode | undefined;
  if (!international) {
    const wanted = defaultCountry?.trim().toUpperCase();
    if (!wanted) return { ok: false, reason: 'national number without a country: add a country column or default_country', needsCountry: true };
    if (!isSupportedCountry(wanted)) return { ok: false, reason: `unknown country "${wanted}"` };
    country = wanted;
    if (getCountryCallingCode(country) === '1') {
      const fast = fastNanpNational(trimmed);
      if (fast) return { ok: true, e164: fast };
    }
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

/**
 * A phone number from a spreadsheet cell stored as a number. Excel turns a typed
 * +4915102000001 into the number 4915102000001 (the "+" is gone) and 0151 02000001 into
 * 15102000001 (the trunk 0 is gone). So the digits are read internationally when they
 * start with the calling code of the row's country (or, without a country, always) and
 * make a possible number that way; otherwise as a national number of that country, which
 * needs no trunk 0.
 */
export function normaliseNumberCell(digits: string, defaultCountry?: string): PhoneResult {
  const text = digits.trim();
  if (!/^\d+$/.test(text)) return normalisePhone(text, defaultCountry);
  const wanted = defaultCountry?.trim().toUpperCase();
  const code = wanted && isSupportedCountry(wanted) ? getCountryCallingCode(wanted) : undefined;
  if (code === undefined || text.startsWith(code)) {
    const international = normalisePhone(`+${text}`);
    if (international.ok || code === undefined) return international;
  }
  return normalisePhone(text, wanted);
}

/**
 * The common case, 40x cheaper: an international number with nothing to rewrite.
 * `parsePhoneNumberWithError` also works out the exact country, which for +1 means
 * trying two dozen NANPA regions' patterns (~50 µs a number, too slow for a million
 * rows), and none of that changes the E.164 form. A national part starting with 0 (a
 * trunk prefix typed after the country code) and anything not possible go the slow way.
 */
function fastInternational(text: string): string | undefined {
  const compact = text.replace(/[\s().\-/]/g, '');
  if (!/^\+[1-9]\d{5,16}$/.test(compact)) return undefined;
  try {
    const number = new PhoneNumber(compact as E164Number);
    if (number.nationalNumber.startsWith('0') || !number.isPossible()) return undefined;
    return number.number;
  } catch {
    return undefined;
  }
}

/** A North American national number without its trunk prefix 1: just add +1. */
function fastNanpNational(text: string): string | undefined {
  const digits = text.replace(/[\s().\-/]/g, '');
  if (!/^[2-9]\d{9}$/.test(digits)) return undefined;
  return fastInternational(`+1${digits}`);
}

/**
 * True when the E.164 number is in a range its country has assigned (stricter than the
 * import's "possible": a tie-breaker between readings of one national number, never a
 * reason to refuse one, as test ranges such as +1 555 are not assigned).
 */
export function isAssignedNumber(e164: string): boolean {
  return isValidPhoneNumber(e164);
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

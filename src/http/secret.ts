import crypto from 'node:crypto';

// Both sides are hashed first so that the compared buffers always have the same length:
// timingSafeEqual throws on unequal lengths, and an early length check would leak the
// secret's length through timing. `crypto.` stays qualified so that a test can observe
// that the constant-time primitive is the one in use.

/** Whether `given` equals `expected`, compared in constant time; false when either is missing. */
export function secretMatches(given: string | undefined | null, expected: string | undefined): boolean {
  if (given == null || expected === undefined || expected === '') return false;
  const a = crypto.createHash('sha256').update(given, 'utf8').digest();
  const b = crypto.createHash('sha256').update(expected, 'utf8').digest();
  return crypto.timingSafeEqual(a, b);
}

import { DateTime } from 'luxon';

const NAIVE_SQL = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
/** The same stamp taken apart, for the UTC fast path. */
const NAIVE_PARTS = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;

/**
 * Turns a service timestamp into epoch ms, or null when it cannot be read. Accepts
 * `YYYY-MM-DD HH:MM:SS` (read in `serverZone`, the zone the service writes such
 * stamps in) and ISO 8601 with `Z` or an offset, with or without fractional seconds.
 */
export function parseServiceTime(text: string | null | undefined, serverZone = 'UTC'): number | null {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  if (s === '') return null;
  // Every webhook and listed call carries two such stamps, and luxon's parse was a few
  // per cent of the daemon's CPU per call: a naive stamp read in UTC needs no zone rules.
  if (serverZone === 'UTC') {
    const fast = naiveUtc(s);
    if (fast !== undefined) return fast;
  }
  const naive = NAIVE_SQL.exec(s);
  // Luxon keeps only milliseconds; microseconds are cut rather than rounded so a
  // stamp never moves later than the instant it names.
  const iso = naive ? `${naive[1]}T${trimFraction(naive[2] ?? '')}` : trimFraction(s.replace(' ', 'T'));
  const dt = DateTime.fromISO(iso, { zone: serverZone, setZone: false });
  return dt.isValid ? dt.toMillis() : null;
}

/** Cuts fractional seconds to three digits (luxon's precision). */
function trimFraction(s: string): string {
  return s.replace(/(\.\d{3})\d+/, '$1');
}

/** A naive stamp read as UTC: epoch ms, null for an impossible date or time, undefined when not naive. */
function naiveUtc(s: string): number | null | undefined {
  const m = NAIVE_PARTS.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  // 24:00 is ISO's end of day, which luxon reads as the next midnight: left to it.
  if (h > 23) return undefined;
  if (mo < 1 || mo > 12 || d < 1 || mi > 59 || sec > 59) return null;
  const at = Date.UTC(y, mo - 1, d, h, mi, sec, ms);
  // Date.UTC rolls 30 February over into March: the day must survive the round trip.
  return new Date(at).getUTCDate() === d ? at : null;
}

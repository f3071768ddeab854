import { DateTime } from 'luxon';

const NAIVE_SQL = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;

/**
 * Turns a service timestamp into epoch ms, or null when it cannot be read. Accepts
 * `YYYY-MM-DD HH:MM:SS` (read in `serverZone`, the zone the service writes such
 * stamps in) and ISO 8601 with `Z` or an offset, with or without fractional seconds.
 */
export function parseServiceTime(text: string | null | undefined, serverZone = 'UTC'): number | null {
  if (typeof text !== 'string') return null;
  const s = text.trim();
  if (s === '') return null;
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

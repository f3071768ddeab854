// Human forms of times for `status` and `explain`.

import { DateTime } from 'luxon';

const UNITS: readonly [string, number][] = [
  ['d', 86_400],
  ['h', 3_600],
  ['min', 60],
  ['s', 1],
];

/**
 * A duration from now as "in 3 h 12 min", "in 45 s", "in 2 d 4 h": the two largest units,
 * the second left out when it is zero; seconds rounded up so a pending moment never reads
 * "in 0 s". Zero or negative: "now".
 */
export function formatIn(ms: number): string {
  if (!(ms > 0)) return 'now';
  let rest = Math.ceil(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (parts.length > 0) {
      if (n > 0) parts.push(`${n} ${unit}`);
      break;
    }
    if (n > 0) parts.push(`${n} ${unit}`);
  }
  return `in ${parts.join(' ')}`;
}

/** Local ISO time with offset and no milliseconds, e.g. `2026-11-23T09:00:00+01:00`. */
export function formatLocal(at: number, zone: string): string {
  const dt = DateTime.fromMillis(Math.floor(at / 1000) * 1000, { zone });
  if (!dt.isValid) throw new RangeError(`unknown time zone: ${zone}`);
  // `ZZ` writes +00:00 rather than `Z`, so every zone reads the same way.
  return dt.toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
}

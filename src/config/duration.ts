// Durations in config files: where a field holds seconds, people write "1h" or "90m" as
// often as 3600; both are read, and the seconds are what the rest of campaignd sees.

const UNIT_SECONDS: Readonly<Record<string, number>> = { d: 86_400, h: 3600, m: 60, s: 1 };

/** A whole number of seconds ("3600"), or numbers with units, largest first ("1h", "90m", "1h30m", "2d"). */
export const DURATION_PATTERN = /^(?:\d+|(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?)$/;

/** How a duration is written, for hints. */
export const DURATION_FORMS = 'whole seconds (3600) or a number with a unit: 90s, 15m, 1h, 1h30m, 2d';

/** "1h30m" → 5400; "3600" → 3600; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const compact = text.trim().toLowerCase().replace(/\s+/g, '');
  if (compact === '' || !DURATION_PATTERN.test(compact)) return undefined;
  if (/^\d+$/.test(compact)) return Number(compact);
  let seconds = 0;
  for (const [, amount, unit] of compact.matchAll(/(\d+)([dhms])/g)) seconds += Number(amount) * (UNIT_SECONDS[unit!] ?? 0);
  return seconds;
}

/**
 * A phone number as the service reports it, in the E.164 form attempts are stored in.
 * The service sends E.164, but spaces, dashes, brackets or a missing "+" must not make
 * a call unmatchable.
 */
export function normaliseServicePhone(text: string): string {
  const trimmed = text.trim();
  const digits = trimmed.replace(/[^\d]/g, '');
  if (trimmed.startsWith('00')) return `+${digits.slice(2)}`;
  return `+${digits}`;
}

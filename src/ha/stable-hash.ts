/**
 * A 32-bit hash of `text`, the same in every process and version (FNV-1a, then murmur3's
 * finaliser so that near names such as acct-001 and acct-002 land far apart): for choices
 * that must agree between instances, or spread many accounts without shared state.
 */
export function stableHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

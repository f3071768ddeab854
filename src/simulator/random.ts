// Reproducible randomness. Outcomes must not depend on the order in which concurrent
// requests happen to arrive, so each call draws from its own stream, keyed by the seed,
// the number called and how many calls that number has had before.

/** mulberry32: a small, fast 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a hash of a string mixed with a seed, as an unsigned 32-bit integer. */
export function hashSeed(seed: number, text: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** An integer in [min, max] drawn from `rand`. */
export function randomInt(rand: () => number, min: number, max: number): number {
  const lo = Math.ceil(Math.min(min, max));
  const hi = Math.floor(Math.max(min, max));
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** Picks a key with probability proportional to its weight (weights ≥ 0). */
export function pickWeighted<K extends string>(rand: () => number, weights: Record<K, number>): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + Math.max(0, w), 0);
  let r = rand() * total;
  for (const [key, w] of entries) {
    r -= Math.max(0, w);
    if (r < 0) return key;
  }
  const last = entries.findLast(([, w]) => w > 0) ?? entries[entries.length - 1];
  if (!last) throw new Error('pickWeighted: no keys');
  return last[0];
}

// Seeded randomness of the fake service. sfc32 seeded through a string hash, so each
// call draws from its own stream keyed by (seed, number, how many calls that number had):
// the same seed gives the same outcomes whatever order concurrent requests arrive in.

/** 32-bit FNV-1a hash of a string. */
export function hash32(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A generator of floats in [0, 1) from sfc32, seeded by the parts given. */
export function stream(...parts) {
  const key = parts.join('|');
  let a = hash32(`a${key}`);
  let b = hash32(`b${key}`);
  let c = hash32(`c${key}`);
  let d = 1;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // The first outputs of sfc32 still show the seed; skip them.
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** An integer in [min, max] from `rand`. */
export function between(rand, min, max) {
  return min + Math.floor(rand() * (max - min + 1));
}

/** A key of `shares` ({name: weight}) drawn in proportion to its weight. */
export function pick(rand, shares) {
  const entries = Object.entries(shares).filter(([, w]) => w > 0);
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let x = rand() * total;
  for (const [name, w] of entries) {
    x -= w;
    if (x < 0) return name;
  }
  return entries[entries.length - 1][0];
}

/** Shuffles `items` in place (Fisher–Yates) with `rand`; returns it. */
export function shuffle(rand, items) {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

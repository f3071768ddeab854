// A set of phone numbers for duplicate detection during an import, in a fraction of the
// memory of a Set: E.164 digits (up to 15, exact in a double) in an open-addressing
// table on a Float64Array, 16 bytes per number instead of ~70. Longer numbers, which
// a few national plans allow, fall back to an ordinary Set.

const EMPTY = 0; // no E.164 number is 0

/** Remembers E.164 numbers; `add` says whether the number was new. */
export class PhoneSet {
  private table = new Float64Array(1 << 16);
  private mask = (1 << 16) - 1;
  private count = 0;
  private readonly long = new Set<string>();

  /** Adds `e164`; returns false when it was already there. */
  add(e164: string): boolean {
    if (e164.length > 16) {
      if (this.long.has(e164)) return false;
      this.long.add(e164);
      return true;
    }
    const value = Number(e164.slice(1));
    if (this.insert(value)) {
      if (++this.count * 2 > this.table.length) this.grow();
      return true;
    }
    return false;
  }

  /** How many numbers are held. */
  get size(): number {
    return this.count + this.long.size;
  }

  private insert(value: number): boolean {
    const table = this.table;
    let i = hash(value) & this.mask;
    for (;;) {
      const slot = table[i];
      if (slot === EMPTY) {
        table[i] = value;
        return true;
      }
      if (slot === value) return false;
      i = (i + 1) & this.mask;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Float64Array(old.length * 2);
    this.mask = this.table.length - 1;
    for (const value of old) if (value !== EMPTY) this.insert(value);
  }
}

/** Mixes the low and high parts of the number (phone numbers differ mostly at the end). */
function hash(value: number): number {
  const low = value % 0x100000000 | 0;
  const high = Math.floor(value / 0x100000000) | 0;
  return Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca6b) ^ (low >>> 15);
}

// A set of phone numbers for duplicate detection during an import, in a fraction of the
// memory of a Map: E.164 digits (up to 15, exact in a double) in an open-addressing
// table on a Float64Array, with the line each number was first seen on beside it in a
// Uint32Array: 24 bytes per number (at the table's load of 1/2) instead of ~100. Longer
// numbers, which a few national plans allow, fall back to an ordinary Map.

const EMPTY = 0; // no E.164 number is 0

/** Remembers E.164 numbers and where each was first seen. */
export class PhoneSet {
  private table: Float64Array;
  private lines: Uint32Array;
  private mask: number;
  private count = 0;
  private readonly long = new Map<string, number>();

  /** `expected`: how many numbers may come (an API request knows; a file does not): the table starts at twice that, 64 Ki slots at most, and grows. */
  constructor(expected?: number) {
    const size = expected === undefined ? 1 << 16 : Math.min(1 << 16, Math.max(16, 2 ** Math.ceil(Math.log2(expected * 2))));
    this.table = new Float64Array(size);
    this.lines = new Uint32Array(size);
    this.mask = size - 1;
  }

  /** Adds `e164`; returns false when it was already there. */
  add(e164: string): boolean {
    return this.addAt(e164, 0) === undefined;
  }

  /** Adds `e164` as seen on `line`; returns undefined when it is new, else the line it was first added with. */
  addAt(e164: string, line: number): number | undefined {
    if (e164.length > 16) {
      const first = this.long.get(e164);
      if (first !== undefined) return first;
      this.long.set(e164, line);
      return undefined;
    }
    const first = this.insert(Number(e164.slice(1)), line);
    if (first === undefined && ++this.count * 2 > this.table.length) this.grow();
    return first;
  }

  /** How many numbers are held. */
  get size(): number {
    return this.count + this.long.size;
  }

  private insert(value: number, line: number): number | undefined {
    const table = this.table;
    let i = hash(value) & this.mask;
    for (;;) {
      const slot = table[i];
      if (slot === EMPTY) {
        table[i] = value;
        this.lines[i] = line;
        return undefined;
      }
      if (slot === value) return this.lines[i];
      i = (i + 1) & this.mask;
    }
  }

  private grow(): void {
    const old = this.table;
    const oldLines = this.lines;
    this.table = new Float64Array(old.length * 2);
    this.lines = new Uint32Array(old.length * 2);
    this.mask = this.table.length - 1;
    for (let i = 0; i < old.length; i++) if (old[i] !== EMPTY) this.insert(old[i]!, oldLines[i]!);
  }
}

/** Mixes the low and high parts of the number (phone numbers differ mostly at the end). */
function hash(value: number): number {
  const low = value % 0x100000000 | 0;
  const high = Math.floor(value / 0x100000000) | 0;
  return Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca6b) ^ (low >>> 15);
}

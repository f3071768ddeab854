// A workbook's shared strings, stored compactly. Every text cell of an .xlsx refers to
// this table by index, so all of it is held while the sheet is read: for a million-row
// lead sheet, millions of names. As JavaScript strings in an array that is ~40 bytes
// each plus the chunks they were sliced from (the readers that keep it so peaked at
// 300–900 MB, README "Excel workbooks"); as UTF-8 in one buffer with an offset table it
// is the text's size plus 4 bytes a string.

export class StringTable {
  private bytes = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  /** offsets[i]..offsets[i + 1] are string i's bytes. */
  private offsets = new Uint32Array(1 << 14);
  private n = 0;

  get size(): number {
    return this.n;
  }

  add(text: string): void {
    const need = Buffer.byteLength(text);
    if (this.used + need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + need));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.used += this.bytes.write(text, this.used);
    if (this.n + 2 > this.offsets.length) {
      const grown = new Uint32Array(this.offsets.length * 2);
      grown.set(this.offsets);
      this.offsets = grown;
    }
    this.n++;
    this.offsets[this.n] = this.used;
  }

  /** String `i`, or undefined when the table has no such entry. */
  get(i: number): string | undefined {
    if (!(i >= 0 && i < this.n)) return undefined;
    return this.bytes.toString('utf8', this.offsets[i], this.offsets[i + 1]);
  }
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhoneSet } from '../../src/leads/number-set.js';

describe('PhoneSet', () => {
  it('answers like a Set for E.164 numbers, through growth', () => {
    const e164 = fc.oneof(
      fc.integer({ min: 1_000_000, max: 1_000_500 }).map((n) => `+1555${n}`),
      fc.bigInt({ min: 10n ** 7n, max: 10n ** 15n - 1n }).map((n) => `+${n}`),
      fc.bigInt({ min: 10n ** 15n, max: 10n ** 17n - 1n }).map((n) => `+${n}`),
    );
    fc.assert(
      fc.property(fc.array(e164, { maxLength: 3000 }), (numbers) => {
        const set = new PhoneSet();
        const reference = new Set<string>();
        for (const n of numbers) {
          expect(set.add(n)).toBe(!reference.has(n));
          reference.add(n);
        }
        expect(set.size).toBe(reference.size);
      }),
      { numRuns: 60 },
    );
  });

  it('tells apart long numbers that would collide as doubles', () => {
    const set = new PhoneSet();
    expect(set.add('+4930123456789012')).toBe(true);
    expect(set.add('+4930123456789013')).toBe(true);
    expect(set.add('+4930123456789012')).toBe(false);
    expect(set.size).toBe(2);
  });

  it('holds a hundred thousand sequential numbers', () => {
    const set = new PhoneSet();
    for (let i = 0; i < 100_000; i++) expect(set.add(`+4915${100_000_000 + i}`)).toBe(true);
    for (let i = 0; i < 100_000; i += 997) expect(set.add(`+4915${100_000_000 + i}`)).toBe(false);
    expect(set.size).toBe(100_000);
  });
});

describe('PhoneSet.addAt', () => {
  it('gives the line a number was first added with, through growth and for long numbers', () => {
    const set = new PhoneSet();
    const numbers = Array.from({ length: 100_000 }, (_, i) => `+1555${String(1_000_000 + i)}`);
    numbers.forEach((n, i) => expect(set.addAt(n, i + 2)).toBeUndefined());
    expect(set.addAt('+4930123456789012', 7)).toBeUndefined();
    expect(set.addAt(numbers[0]!, 200_000)).toBe(2);
    expect(set.addAt(numbers[99_999]!, 200_001)).toBe(100_001);
    expect(set.addAt('+4930123456789012', 9)).toBe(7);
    expect(set.size).toBe(100_001);
  });

  it('starts small when told how many numbers may come (one lead posted), and grows past that', () => {
    const set = new PhoneSet(1);
    const numbers = Array.from({ length: 1000 }, (_, i) => `+1555${String(2_000_000 + i)}`);
    numbers.forEach((n, i) => expect(set.addAt(n, i + 1)).toBeUndefined());
    numbers.forEach((n, i) => expect(set.addAt(n, 0)).toBe(i + 1));
    expect(set.size).toBe(1000);
  });
});

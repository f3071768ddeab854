import { describe, expect, it } from 'vitest';
import { compareGroups, normalCdf, twoProportionTest, wilsonInterval } from '../../src/stats/proportions.js';

describe('wilsonInterval', () => {
  // Newcombe RG. Two-sided confidence intervals for the single proportion: comparison of
  // seven methods. Statistics in Medicine 1998;17:857-872, Table I, method 3 (score, no correction).
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0.0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])('%i/%i matches Newcombe 1998 Table I', (x, n, lo, hi) => {
    const [l, h] = wilsonInterval(x, n)!;
    expect(l).toBeCloseTo(lo, 4);
    expect(h).toBeCloseTo(hi, 4);
  });

  it('is null without calls and stays inside [0, 1] at the edges', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    const [l, h] = wilsonInterval(20, 20)!;
    expect(h).toBe(1);
    expect(l).toBeCloseTo(1 - 0.1611, 4);
  });
});

describe('normalCdf', () => {
  // Standard normal table values (e.g. Abramowitz & Stegun, Table 26.1).
  it.each([
    [0, 0.5],
    [1, 0.8413447],
    [-1, 0.1586553],
    [1.644854, 0.95],
    [1.959964, 0.975],
    [2.575829, 0.995],
    [3, 0.9986501],
    [-3.090232, 0.001],
  ])('Φ(%f) = %f', (x, p) => {
    expect(normalCdf(x)).toBeCloseTo(p, 6);
  });
});

describe('twoProportionTest', () => {
  it("z² equals Pearson's chi-square of the 2×2 table (an independent formula)", () => {
    for (const [x1, n1, x2, n2] of [[56, 70, 48, 80], [10, 100, 25, 110], [3, 40, 9, 35]] as const) {
      const [a, b, c, d] = [x1, n1 - x1, x2, n2 - x2];
      const total = n1 + n2;
      const chi2 = (total * (a * d - b * c) ** 2) / (n1 * n2 * (a + c) * (b + d));
      const { z, p } = twoProportionTest(x1, n1, x2, n2);
      expect(z * z).toBeCloseTo(chi2, 9);
      expect(p).toBeCloseTo(2 * (1 - normalCdf(Math.abs(z))), 12);
    }
  });

  it('gives p = 0.05 at |z| = 1.96 and p = 1 when nothing can differ', () => {
    // 56/70 against 48/80: z 2.650, p 0.0080 (z = 0.2 / 0.07547).
    const t = twoProportionTest(56, 70, 48, 80);
    expect(t.z).toBeCloseTo(2.65, 2);
    expect(t.p).toBeCloseTo(0.008, 3);
    expect(2 * (1 - normalCdf(1.959964))).toBeCloseTo(0.05, 6);
    expect(twoProportionTest(0, 10, 0, 12)).toEqual({ z: 0, p: 1 });
    expect(twoProportionTest(3, 0, 1, 10)).toEqual({ z: 0, p: 1 });
  });
});

describe('compareGroups', () => {
  it('tests two groups directly and adjusts the extremes of more groups by the number of pairs', () => {
    const two = compareGroups([{ successes: 56, n: 70 }, { successes: 48, n: 80 }]);
    expect(two.p).toBeCloseTo(twoProportionTest(56, 70, 48, 80).p, 12);
    expect(two.significant).toBe(true);
    const three = compareGroups([{ successes: 56, n: 70 }, { successes: 50, n: 75 }, { successes: 48, n: 80 }]);
    expect(three.p).toBeCloseTo(3 * twoProportionTest(56, 70, 48, 80).p, 12);
    expect(compareGroups([{ successes: 5, n: 10 }, { successes: 0, n: 0 }])).toEqual({ p: null, significant: false });
    expect(compareGroups([{ successes: 5, n: 10 }, { successes: 50, n: 100 }])).toEqual({ p: 1, significant: false });
  });
});

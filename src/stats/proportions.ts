// Statistics of success rates, for comparing assistant variants (README, "Assistant variants"):
// the Wilson score interval of one proportion and the pooled two-proportion z-test.
// Plain numbers in, plain numbers out; checked against published tables in
// test/unit/stats-proportions.test.ts.

/** z for a two-sided 95 % interval: Φ⁻¹(0.975). */
export const Z_95 = 1.959963984540054;

/**
 * Wilson score interval (without continuity correction) of `successes` out of `n`,
 * at the given z. Unlike the plain p ± z·se interval it stays within [0, 1] and is
 * usable at 0 and n successes and for small n. Null when n is 0 (nothing to estimate).
 */
export function wilsonInterval(successes: number, n: number, z: number = Z_95): [number, number] | null {
  if (n <= 0) return null;
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // The formula gives exactly 0 and 1 at the edges; rounding must not push past them.
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * The complementary error function, with fractional error below 1.2e-7 everywhere
 * (Chebyshev fit, Press et al., Numerical Recipes in C, 2nd ed., routine erfcc).
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** Standard normal cumulative distribution Φ(x). */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

export interface TwoProportionTest {
  /** The z statistic (first minus second), 0 when undefined. */
  z: number;
  /** Two-sided p-value; 1 when there is nothing to compare. */
  p: number;
}

/**
 * Pooled two-proportion z-test of H0: both rates are equal. Two-sided. With no calls in
 * one group, or every outcome the same in both (pooled rate 0 or 1), there is no evidence
 * of a difference: z 0, p 1.
 */
export function twoProportionTest(x1: number, n1: number, x2: number, n2: number): TwoProportionTest {
  if (n1 <= 0 || n2 <= 0) return { z: 0, p: 1 };
  const pooled = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return { z: 0, p: 1 };
  const z = (x1 / n1 - x2 / n2) / se;
  return { z, p: Math.min(1, 2 * (1 - normalCdf(Math.abs(z)))) };
}

export interface GroupRate {
  successes: number;
  n: number;
}

export interface GroupsComparison {
  /** Two-sided p-value, Bonferroni-adjusted for the number of pairs; null with fewer than two groups that have calls. */
  p: number | null;
  significant: boolean;
}

/**
 * Whether the success rates of several groups differ, at level `alpha`. Two groups: the
 * two-proportion test. More: the test between the highest and the lowest rate, its
 * p-value multiplied by the number of pairs (Bonferroni), since picking the extremes
 * after looking is the same as testing every pair.
 */
export function compareGroups(groups: readonly GroupRate[], alpha = 0.05): GroupsComparison {
  const withCalls = groups.filter((g) => g.n > 0);
  if (withCalls.length < 2) return { p: null, significant: false };
  const rate = (g: GroupRate) => g.successes / g.n;
  let hi = withCalls[0]!;
  let lo = withCalls[0]!;
  for (const g of withCalls) {
    if (rate(g) > rate(hi)) hi = g;
    if (rate(g) < rate(lo)) lo = g;
  }
  if (hi === lo) return { p: 1, significant: false };
  const pairs = (withCalls.length * (withCalls.length - 1)) / 2;
  const p = Math.min(1, twoProportionTest(hi.successes, hi.n, lo.successes, lo.n).p * pairs);
  return { p, significant: p < alpha };
}

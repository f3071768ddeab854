import type { CampaignStatus } from './types.js';

// The human `status`'s table of a campaign's assistant variants (README, "Assistant variants"),
// under the campaigns table: one row per variant, then the test of their difference.

const HEAD = ['VARIANT', 'ASSISTANT', 'WEIGHT', 'LEADS', 'CALLS', 'REACHED', 'SUCCESS', 'RATE (95 %)', 'COST/SUCCESS'] as const;

export function renderVariantLines(c: CampaignStatus): string[] {
  if (!c.variants) return [];
  const rows = c.variants.map((v) => [
    v.name,
    String(v.assistant_id),
    String(v.weight),
    String(v.leads),
    String(v.calls),
    String(v.reached),
    String(v.successes),
    v.success_rate === null || v.interval === null ? '-' : `${pct(v.success_rate)} (${pct(v.interval[0])}–${pct(v.interval[1])})`,
    v.cost_per_success === null ? '-' : v.cost_per_success.toFixed(2),
  ]);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`.trimEnd();
  const verdict =
    c.variants_p_value === null || c.variants_p_value === undefined
      ? 'difference: not yet testable (needs calls on two variants)'
      : `difference: ${c.variants_significant ? 'significant' : 'not significant'} (p = ${c.variants_p_value.toFixed(4)}, two-proportion test)`;
  return [`Variants of ${c.name}:`, line(HEAD), ...rows.map(line), `  ${verdict}`];
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

// The variants table of the human status and of the dashboard card, from one report.
import { describe, expect, it } from 'vitest';
import { renderVariants } from '../../src/dashboard/render-variants.js';
import { renderVariantLines } from '../../src/status/render-variants.js';
import type { CampaignStatus } from '../../src/status/types.js';

const campaign = {
  name: 'ab',
  variants: [
    { name: 'friendly', assistant_id: 12, weight: 1, leads: 120, calls: 200, called_leads: 100, reached: 60, successes: 30, success_rate: 0.3, interval: [0.2189, 0.3958], cost: 75, cost_per_success: 2.5 },
    { name: '<direct>', assistant_id: 14, weight: 1, leads: 5, calls: 0, called_leads: 0, reached: 0, successes: 0, success_rate: null, interval: null, cost: 0, cost_per_success: null },
  ],
  variants_p_value: null,
  variants_significant: false,
} as unknown as CampaignStatus;

describe('assistant variants, rendered', () => {
  it('status: one aligned row per variant with the rate and its interval, then the verdict', () => {
    const lines = renderVariantLines(campaign);
    expect(lines[0]).toBe('Variants of ab:');
    expect(lines[2]).toMatch(/^ {2}friendly\s+12\s+1\s+120\s+200\s+60\s+30\s+30\.0% \(21\.9%–39\.6%\)\s+2\.50$/);
    expect(lines[3]).toMatch(/<direct>.*\s-\s+-$/);
    expect(lines[4]).toBe('  difference: not yet testable (needs calls on two variants)');
    const tested = { ...campaign, variants_p_value: 0.0123, variants_significant: true } as CampaignStatus;
    expect(renderVariantLines(tested).at(-1)).toBe('  difference: significant (p = 0.0123, two-proportion test)');
    expect(renderVariantLines({ ...campaign, variants: undefined } as CampaignStatus)).toEqual([]);
  });

  it('dashboard: a table with the interval drawn to scale, names escaped', () => {
    const text = (renderVariants(campaign) as { text: string }).text;
    expect(text).toContain('<table class="variants">');
    expect(text).toContain('&lt;direct&gt;');
    expect(text).not.toContain('<direct>');
    // 21.89 % to 39.58 % of a 200-wide scale: x 43.78, width 35.38; the rate's tick at 60 - 1.
    expect(text).toContain('<rect class="ci" x="43.78" y="2" width="35.38" height="8">');
    expect(text).toContain('<rect class="rate" x="59.00" y="0" width="2" height="12">');
    expect(renderVariants({ ...campaign, variants: undefined } as CampaignStatus)).toBe('');
  });
});

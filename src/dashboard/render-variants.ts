import type { CampaignStatus } from '../status/types.js';
import { fmt, intervalBar, pct } from './charts.js';
import { html, type Html } from './html.js';

// A campaign card's assistant variants (README, "Assistant variants"): one row per variant
// with its success rate drawn with its 95 % interval, then whether the difference is significant.

export function renderVariants(c: CampaignStatus): Html | '' {
  if (!c.variants) return '';
  const verdict =
    c.variants_p_value === null || c.variants_p_value === undefined
      ? 'not yet testable'
      : `${c.variants_significant ? 'significant difference' : 'no significant difference'} (p = ${c.variants_p_value.toFixed(3)})`;
  const rows = c.variants.map(
    (v) => html`<tr><td>${v.name} <small class="muted">#${v.assistant_id} · weight ${v.weight}</small></td><td>${fmt(v.leads)}</td><td>${fmt(v.calls)}</td><td>${fmt(v.reached)}</td><td>${fmt(v.successes)}</td><td>${v.success_rate === null ? '–' : pct(v.success_rate, 1)}</td><td>${intervalBar(v.success_rate, v.interval, `success rate of ${v.name} with its 95 % interval`)}</td><td>${v.cost_per_success === null ? '–' : v.cost_per_success.toFixed(2)}</td></tr>`,
  );
  return html`<h3>Assistant variants <small>${verdict}</small></h3>
<table class="variants"><thead><tr><th>variant</th><th>leads</th><th>calls</th><th>reached</th><th>successes</th><th>rate</th><th>95 % interval (0–100 %)</th><th>cost / success</th></tr></thead><tbody>${rows}</tbody></table>`;
}

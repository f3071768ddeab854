import { html, type Html } from './html.js';

// Charts as inline SVG drawn here: no chart library, nothing fetched. Sizes are in a
// viewBox so the browser scales them; colours come from classes in the stylesheet.

export interface Segment {
  label: string;
  value: number;
  /** CSS class giving the colour (s-completed, …). */
  cls: string;
}

/** A count as people read it: 1,234,567. */
export const fmt = (n: number): string => n.toLocaleString('en');

/** One horizontal bar split into segments (lead states), each with a hover title. */
export function stackedBar(segments: readonly Segment[], label: string): Html {
  const total = segments.reduce((n, s) => n + s.value, 0);
  const W = 1000;
  let x = 0;
  const rects = segments
    .filter((s) => s.value > 0)
    .map((s) => {
      const w = (s.value / total) * W;
      const r = html`<rect class="${s.cls}" x="${x.toFixed(2)}" y="0" width="${Math.max(w, 0.5).toFixed(2)}" height="20"><title>${s.label}: ${fmt(s.value)} (${pct(s.value, total)})</title></rect>`;
      x += w;
      return r;
    });
  return html`<svg class="bar" viewBox="0 0 ${W} 20" preserveAspectRatio="none" role="img" aria-label="${label}"><rect class="empty" x="0" y="0" width="${W}" height="20"></rect>${rects}</svg>`;
}

/** The legend of a stacked bar: a swatch, the label and the count of each segment. */
export function legend(segments: readonly Segment[]): Html {
  return html`<ul class="legend">${segments.map((s) => html`<li><span class="sw ${s.cls}"></span>${s.label} <b>${fmt(s.value)}</b></li>`)}</ul>`;
}

/** Columns of counts per hour, oldest first; the last column is the hour under way. */
export function hourColumns(values: readonly number[], firstHourUtcMs: number, label: string): Html {
  const max = Math.max(1, ...values);
  const W = 240;
  const H = 40;
  const step = W / values.length;
  const cols = values.map((v, i) => {
    const h = v === 0 ? 0 : Math.max(1.5, (v / max) * (H - 2));
    const at = new Date(firstHourUtcMs + i * 3_600_000).toISOString().slice(11, 16);
    return html`<rect class="${i === values.length - 1 ? 'col now' : 'col'}" x="${(i * step + 0.5).toFixed(1)}" y="${(H - h).toFixed(1)}" width="${(step - 1).toFixed(1)}" height="${h.toFixed(1)}"><title>${at} UTC: ${fmt(v)} attempt${v === 1 ? '' : 's'}</title></rect>`;
  });
  return html`<svg class="hours" viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${label}"><line class="axis" x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}"></line>${cols}</svg>`;
}

/**
 * A rate with its 95 % interval on a 0–100 % scale: the interval as a band, the rate as a
 * tick. One scale for every variant of a card, so overlapping bands read as "not told apart yet".
 */
export function intervalBar(rate: number | null, interval: readonly [number, number] | null, label: string): Html {
  const W = 200;
  const x = (v: number) => (Math.min(1, Math.max(0, v)) * W).toFixed(2);
  const band = interval ? html`<rect class="ci" x="${x(interval[0])}" y="2" width="${Math.max(0.5, (interval[1] - interval[0]) * W).toFixed(2)}" height="8"><title>95 % interval ${pct(interval[0], 1)} – ${pct(interval[1], 1)}</title></rect>` : '';
  const tick = rate === null ? '' : html`<rect class="rate" x="${(Math.min(1, Math.max(0, rate)) * W - 1).toFixed(2)}" y="0" width="2" height="12"></rect>`;
  return html`<svg class="ci" viewBox="0 0 ${W} 12" preserveAspectRatio="none" role="img" aria-label="${label}"><rect class="empty" x="0" y="4" width="${W}" height="4"></rect>${band}${tick}</svg>`;
}

/** Live calls against the campaign's limit. */
export function meter(value: number, limit: number, label: string): Html {
  const W = 100;
  const w = limit > 0 ? Math.min(1, value / limit) * W : 0;
  return html`<svg class="meter" viewBox="0 0 ${W} 8" preserveAspectRatio="none" role="img" aria-label="${label}"><rect class="empty" x="0" y="0" width="${W}" height="8"></rect><rect class="${value >= limit ? 'fill full' : 'fill'}" x="0" y="0" width="${w.toFixed(2)}" height="8"></rect></svg>`;
}

export function pct(part: number, total: number): string {
  if (total <= 0) return '0 %';
  const p = (part / total) * 100;
  return `${p < 10 && p > 0 ? p.toFixed(1) : Math.round(p)} %`;
}

import type { AssistantVariant } from '../config/types.js';

// Which variant a lead is first given (README, "Assistant variants"): a fixed function of the
// lead's id and the weights, so that it needs no shared state and every instance proposes
// the same one. It is stored on the lead at the first claim (store/variants.ts) and read
// back from there afterwards, so editing the weights moves only leads not yet called.

/** A 32-bit mix of the lead id (murmur3's finaliser): consecutive ids spread evenly over [0, 1). */
function unitHash(leadId: number): number {
  let h = (leadId ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h / 0x1_0000_0000;
}

/** The variant for a lead not yet given one: variant i with probability weight_i / Σ weights. */
export function pickVariant(variants: readonly AssistantVariant[], leadId: number): AssistantVariant {
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  let point = unitHash(leadId) * total;
  for (const v of variants) {
    if (point < v.weight) return v;
    point -= v.weight;
  }
  return variants[variants.length - 1]!;
}

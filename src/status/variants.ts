import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { compareGroups, wilsonInterval } from '../stats/proportions.js';
import { variantCountsByCampaign, variantExtractedByCampaign, type VariantCounts, type VariantExtracted } from '../store/variants.js';
import { judgeExtracted, keptSuccesses, successRuleKey } from '../store/variant-successes.js';
import type { Database } from '../store/types.js';
import type { VariantComparison, VariantStatus } from './types.js';

// The per-variant figures of a campaign with assistant variants (README, "Assistant variants").
// The unit is the lead: a lead succeeds once (a reached call; with success_when, a reached
// call whose extracted variable says so), and the rate is over the leads called so far, so
// retries do not weigh a variant down twice.

/**
 * The per-variant figures of each of these campaigns that has variants, by campaign id: the
 * counts the database keeps (one read of a few rows per campaign), and with success_when the
 * successes it kept under the campaign's rule (migration 0035), or, where it cannot vouch for
 * them, the extracted variables of every reached call, judged here.
 */
export async function collectVariantsByCampaign(db: Kysely<Database>, campaigns: readonly { id: number; config: CampaignConfig | undefined }[]): Promise<Map<number, VariantComparison>> {
  const withVariants = campaigns.filter((c) => c.config?.variants);
  const out = new Map<number, VariantComparison>();
  if (withVariants.length === 0) return out;
  const counts = await variantCountsByCampaign(db, withVariants.map((c) => c.id));
  const judged = withVariants.filter((c) => c.config?.successWhen);
  // The successes the database kept under each campaign's rule; the campaigns it could not
  // vouch for (a rule not judged again yet, a call judged under another) judged here, from their calls.
  const kept = await keptSuccesses(db, judged.map((c) => ({ id: c.id, key: successRuleKey(c.config!.successWhen!) })));
  const unkept = judged.filter((c) => !kept.has(c.id));
  const extracted = unkept.length > 0 ? await variantExtractedByCampaign(db, unkept.map((c) => c.id)) : new Map<number, VariantExtracted[]>();
  for (const c of withVariants) {
    const config = c.config!;
    const successes = config.successWhen ? (kept.get(c.id) ?? successesByVariant(extracted.get(c.id) ?? [], config)) : null;
    out.set(c.id, compareVariants(config, counts.get(c.id) ?? [], successes));
  }
  return out;
}

/** Variants of the file (in its order), with the counts the store has for each. */
function compareVariants(config: CampaignConfig, stored: readonly VariantCounts[], successes: Map<string, number> | null): VariantComparison {
  const variants = config.variants!;
  const counts = new Map(stored.map((c) => [c.variant, c]));
  const rows: VariantStatus[] = variants.map((v) => {
    const c = counts.get(v.name);
    const called = c?.calledLeads ?? 0;
    const success = successes ? (successes.get(v.name) ?? 0) : (c?.reachedLeads ?? 0);
    const interval = wilsonInterval(success, called);
    return {
      name: v.name,
      assistant_id: v.assistantId,
      weight: v.weight,
      leads: c?.leads ?? 0,
      calls: c?.calls ?? 0,
      called_leads: called,
      reached: c?.reachedLeads ?? 0,
      successes: success,
      success_rate: called > 0 ? round(success / called, 4) : null,
      interval: interval ? [round(interval[0], 4), round(interval[1], 4)] : null,
      cost: round(c?.cost ?? 0, 4),
      cost_per_success: success > 0 ? round((c?.cost ?? 0) / success, 4) : null,
    };
  });
  const test = compareGroups(rows.map((r) => ({ successes: r.successes, n: r.called_leads })));
  return { variants: rows, p_value: test.p === null ? null : round(test.p, 4), significant: test.significant };
}

function successesByVariant(extracted: readonly VariantExtracted[], config: CampaignConfig): Map<string, number> {
  const leads = new Map<string, Set<number>>();
  for (const row of extracted) {
    // The same judgment as the result's writer made (an unreadable record says nothing).
    if (!judgeExtracted(config.successWhen!, row.extractedJson)) continue;
    let set = leads.get(row.variant);
    if (!set) leads.set(row.variant, (set = new Set()));
    set.add(row.leadId);
  }
  return new Map([...leads].map(([name, set]) => [name, set.size]));
}

function round(x: number, places: number): number {
  const f = 10 ** places;
  return Math.round(x * f) / f;
}

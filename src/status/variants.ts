import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { variableSays } from '../config/variable-match.js';
import { compareGroups, wilsonInterval } from '../stats/proportions.js';
import { variantCounts, variantExtracted } from '../store/variants.js';
import type { Database } from '../store/types.js';
import type { VariantComparison, VariantStatus } from './types.js';

// The per-variant figures of a campaign with assistant variants (README, "Assistant variants").
// The unit is the lead: a lead succeeds once (a reached call; with success_when, a reached
// call whose extracted variable says so), and the rate is over the leads called so far, so
// retries do not weigh a variant down twice.

/** Variants of the file (in its order), with the counts the store has for each; null for a campaign without variants. */
export async function collectVariants(db: Kysely<Database>, campaignId: number, config: CampaignConfig | undefined): Promise<VariantComparison | null> {
  const variants = config?.variants;
  if (!variants) return null;
  const counts = new Map((await variantCounts(db, campaignId)).map((c) => [c.variant, c]));
  const successes = config.successWhen ? await successesByVariant(db, campaignId, config) : null;
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

async function successesByVariant(db: Kysely<Database>, campaignId: number, config: CampaignConfig): Promise<Map<string, number>> {
  const leads = new Map<string, Set<number>>();
  for (const row of await variantExtracted(db, campaignId)) {
    let extracted: unknown;
    try {
      extracted = JSON.parse(row.extractedJson);
    } catch {
      continue; // an unreadable record says nothing
    }
    if (!variableSays(config.successWhen, extracted)) continue;
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

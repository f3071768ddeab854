import { sql, type Kysely } from 'kysely';
import { hasMigration } from './migrate.js';
import type { Database } from './types.js';

// Assistant variants (README, "Assistant variants"). A lead's variant is written once, at its
// first claim, and read back from the row on every later attempt: the row, not the weights,
// is the truth, so restarts, takeovers and edited weights leave called leads where they were.

/** The migration that adds leads.variant. */
export const VARIANTS_MIGRATION = '0018_variants';

/**
 * Gives each lead its proposed variant unless it already holds one of `known` (the
 * campaign's current variant names), and returns every lead's stored variant. A lead whose
 * variant was removed from the file gets the proposed one instead. Two instances proposing
 * for the same lead: the first write wins and both read it back.
 */
export async function settleLeadVariants(db: Kysely<Database>, proposals: readonly { leadId: number; variant: string }[], known: readonly string[]): Promise<Map<number, string>> {
  const stored = new Map<number, string>();
  if (proposals.length === 0) return stored;
  // One UPDATE for the pass, its RETURNING the leads it gave a variant: the dial loop
  // settles every lead of a pass, and on PostgreSQL each statement outside a transaction is
  // a round trip and a commit. Only a lead that held one already is read back.
  const byVariant = new Map<string, number[]>();
  for (const p of proposals) byVariant.set(p.variant, [...(byVariant.get(p.variant) ?? []), p.leadId]);
  const choice = sql.join([...byVariant].map(([variant, ids]) => sql`when id in (${sql.join(ids)}) then ${variant}`), sql` `);
  const given = await db
    .updateTable('leads')
    .set({ variant: sql<string>`case ${choice} end` })
    .where('id', 'in', proposals.map((p) => p.leadId))
    .where((eb) => eb.or([eb('variant', 'is', null), eb('variant', 'not in', known)]))
    .returning(['id', 'variant'])
    .execute();
  for (const r of given) if (r.variant !== null) stored.set(Number(r.id), r.variant);
  const held = proposals.filter((p) => !stored.has(p.leadId)).map((p) => p.leadId);
  if (held.length > 0) {
    const rows = await db.selectFrom('leads').select(['id', 'variant']).where('id', 'in', held).execute();
    for (const r of rows) if (r.variant !== null) stored.set(Number(r.id), r.variant);
  }
  return stored;
}

/** One variant's counts: leads given it, their ended calls, and leads called / reached. */
export interface VariantCounts {
  variant: string;
  leads: number;
  /** Ended, counted attempts. */
  calls: number;
  /** Leads with at least one ended call. */
  calledLeads: number;
  /** Leads with at least one call that reached the person (outcome success). */
  reachedLeads: number;
  /** Sum of the known call costs. */
  cost: number;
}

/** A call's extracted variables, for success_when: the caller decides which leads succeeded. */
export interface VariantExtracted {
  variant: string;
  leadId: number;
  extractedJson: string;
}

/** The migration whose triggers keep the per-variant figures (variant_counts). */
export const VARIANT_COUNTS_MIGRATION = '0031_variant_counts';

/**
 * Per-variant counts of these campaigns, by campaign id: the sums the database keeps
 * (variant_counts, migration 0031), one read of a few rows per campaign and variant,
 * whatever the number of calls. Empty on a database not yet migrated to 0018; on one not
 * yet migrated to 0031 (status opens it read-only and cannot migrate it), recounted.
 */
export async function variantCountsByCampaign(db: Kysely<Database>, campaignIds: readonly number[]): Promise<Map<number, VariantCounts[]>> {
  if (campaignIds.length === 0 || !(await hasMigration(db, VARIANT_COUNTS_MIGRATION))) return recountVariantsByCampaign(db, campaignIds);
  const out = new Map<number, VariantCounts[]>();
  const rows = await db
    .selectFrom('variant_counts')
    .select(['campaign_id', 'variant', 'leads', 'calls', 'called_leads', 'reached_leads', 'cost'])
    .where('campaign_id', 'in', [...new Set(campaignIds)])
    .where('variant', '<>', '')
    .orderBy('campaign_id')
    .orderBy('variant')
    .execute();
  for (const r of rows) {
    // A variant whose last lead left it keeps a row of zeros: as absent as no row.
    if (Number(r.leads) === 0) continue;
    const v = { variant: r.variant, leads: Number(r.leads), calls: Number(r.calls), calledLeads: Number(r.called_leads), reachedLeads: Number(r.reached_leads), cost: Number(r.cost) };
    out.set(Number(r.campaign_id), [...(out.get(Number(r.campaign_id)) ?? []), v]);
  }
  return out;
}

/**
 * variantCountsByCampaign counted from the rows themselves, in two grouped reads over
 * the campaigns' leads (index leads_variant) and their ended attempts: what the counters
 * must equal. The attempts are summed per lead first (walking attempts_lead in order), then
 * the leads per variant: counting distinct leads straight from the attempts sorted every
 * attempt twice.
 */
export async function recountVariantsByCampaign(db: Kysely<Database>, campaignIds: readonly number[]): Promise<Map<number, VariantCounts[]>> {
  const out = new Map<number, VariantCounts[]>();
  if (campaignIds.length === 0 || !(await hasMigration(db, VARIANTS_MIGRATION))) return out;
  const ids = [...new Set(campaignIds)];
  const leads = await db
    .selectFrom('leads')
    .select(['campaign_id', 'variant', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('campaign_id', 'in', ids)
    .where('variant', 'is not', null)
    .groupBy(['campaign_id', 'variant'])
    .execute();
  // An attempt belongs to its lead's campaign (the claim takes the lead from it).
  const perLead = db
    .selectFrom('attempts as a')
    .leftJoin('call_results as r', 'r.attempt_id', 'a.id')
    .select([
      'a.lead_id',
      (eb) => eb.fn.countAll<number | string>().as('calls'),
      sql<number>`max(case when a.outcome = 'success' then 1 else 0 end)`.as('reached'),
      sql<number | string | null>`sum(r.cost)`.as('cost'),
    ])
    .where('a.campaign_id', 'in', ids)
    .where('a.outcome', 'is not', null)
    .where('a.counted', '=', 1)
    .groupBy('a.lead_id')
    .as('p');
  const calls = await db
    .selectFrom(perLead)
    .innerJoin('leads as l', 'l.id', 'p.lead_id')
    .select([
      'l.campaign_id',
      'l.variant',
      sql<number | string>`sum(p.calls)`.as('calls'),
      (eb) => eb.fn.countAll<number | string>().as('called'),
      sql<number | string>`sum(p.reached)`.as('reached'),
      sql<number | string | null>`sum(p.cost)`.as('cost'),
    ])
    .where('l.variant', 'is not', null)
    .groupBy(['l.campaign_id', 'l.variant'])
    .execute();
  const byKey = new Map<string, VariantCounts>();
  const entry = (campaignId: number, variant: string): VariantCounts => {
    const key = `${campaignId}\u0000${variant}`;
    let v = byKey.get(key);
    if (!v) {
      byKey.set(key, (v = { variant, leads: 0, calls: 0, calledLeads: 0, reachedLeads: 0, cost: 0 }));
      out.set(campaignId, [...(out.get(campaignId) ?? []), v]);
    }
    return v;
  };
  for (const r of leads) entry(Number(r.campaign_id), r.variant!).leads = Number(r.n);
  for (const r of calls) {
    const v = entry(Number(r.campaign_id), r.variant!);
    v.calls = Number(r.calls);
    v.calledLeads = Number(r.called);
    v.reachedLeads = Number(r.reached);
    v.cost = Number(r.cost ?? 0);
  }
  return out;
}

/**
 * The extracted variables of these campaigns' reached calls, with each lead's variant (for
 * success_when where the database did not keep the judgments: src/store/variant-successes.ts),
 * by campaign id: one read, as long as the reached calls (~0.7 s for 200,000;
 * bench/RESULTS.md). A partial index of successes made it slower: one sequential pass over the
 * attempts beats 200,000 random lookups of their leads and results.
 */
export async function variantExtractedByCampaign(db: Kysely<Database>, campaignIds: readonly number[]): Promise<Map<number, VariantExtracted[]>> {
  const out = new Map<number, VariantExtracted[]>();
  if (campaignIds.length === 0 || !(await hasMigration(db, VARIANTS_MIGRATION))) return out;
  const rows = await db
    .selectFrom('attempts as a')
    .innerJoin('leads as l', 'l.id', 'a.lead_id')
    .innerJoin('call_results as r', 'r.attempt_id', 'a.id')
    .select(['a.campaign_id', 'l.variant', 'a.lead_id', 'r.extracted_json'])
    .where('a.campaign_id', 'in', [...new Set(campaignIds)])
    .where('a.outcome', '=', 'success')
    // A reached call is a counted one (the figures' reachedLeads): a withdrawn attempt reached no one.
    .where('a.counted', '=', 1)
    .where('l.variant', 'is not', null)
    .where('r.extracted_json', 'is not', null)
    .execute();
  for (const r of rows) {
    const id = Number(r.campaign_id);
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push({ variant: r.variant!, leadId: Number(r.lead_id), extractedJson: r.extracted_json! });
  }
  return out;
}

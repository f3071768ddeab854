import type { Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Two indexes of `leads` held an entry for every lead, though every read through them asks
// for a value that is set:
// - leads_variant (0018): the per-variant counts read `variant IS NOT NULL`; a lead has no
//   variant until its first claim in a campaign with variants, and never in one without;
// - leads_campaign_external_id (0015): looked up by `external_id = …` or `IN (…)`; leads from
//   files have none. Uniqueness is unchanged: it never applied to nulls.
// Each index entry is work on every insert: a 10,000-lead COPY on PostgreSQL spent ~10 % of
// its time on these two (bench/RESULTS.md, 2026-11-28). As partial indexes they hold only
// the leads that have the value, and both databases' planners still use them for those
// reads (a comparison with the column implies it is not null).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_variant').execute();
  await db.schema.createIndex('leads_variant').on('leads').columns(['campaign_id', 'variant']).where('variant', 'is not', null).execute();
  await db.schema.dropIndex('leads_campaign_external_id').execute();
  await db.schema.createIndex('leads_campaign_external_id').on('leads').columns(['campaign_id', 'external_id']).unique().where('external_id', 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_campaign_external_id').execute();
  await db.schema.createIndex('leads_campaign_external_id').on('leads').columns(['campaign_id', 'external_id']).unique().execute();
  await db.schema.dropIndex('leads_variant').execute();
  await db.schema.createIndex('leads_variant').on('leads').columns(['campaign_id', 'variant']).execute();
}

import type { Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Assistant variants (README, "Assistant variants"): the variant a lead was given, stored
// when its first attempt is claimed, so that every later attempt, a restart, a takeover by
// another instance and a change of the weights all keep it. Null until then and for
// campaigns without variants. The index serves the per-variant counts of `status`
// (campaign_id first, as every read of a campaign's leads).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').addColumn('variant', 'text').execute();
  await db.schema.createIndex('leads_variant').on('leads').columns(['campaign_id', 'variant']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_variant').execute();
  await db.schema.alterTable('leads').dropColumn('variant').execute();
}

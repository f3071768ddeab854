import type { Kysely } from 'kysely';
import { integer, withId } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Callbacks the person asks for (README, "Callbacks the person asks for"). One row per
// call whose extracted variable asked for a callback, written in the transaction that
// recorded the call's outcome; the unique attempt_id makes a second decision for the
// same call impossible (the webhook and the call list both report it, a restart, a
// takeover). state: 'scheduled' (the lead is due at due_at), 'placed' (the callback call
// was made: placed_attempt_id), 'refused' (recorded, not scheduled: refused_reason).
// asked is the person's words; zone the zone they were read in; asked_at the moment they
// name; due_at the first moment the campaign window and calling rules allow from then,
// with moved_reason saying why it differs. extracted_json: the asking call's extracted
// variables, passed to the callback call as previous.NAME.
//
// leads.callbacks_given counts a lead's scheduled callbacks (callbacks.max_per_lead).
// The (campaign_id, state, due_at) index serves the claim (callbacks first) and the
// per-campaign counts of `status`.

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  await withId(db, db.schema.createTable('callbacks'))
    .addColumn('campaign_id', int, (c) => c.notNull())
    .addColumn('lead_id', int, (c) => c.notNull())
    .addColumn('attempt_id', int, (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('asked', 'text', (c) => c.notNull())
    .addColumn('zone', 'text')
    .addColumn('asked_at', 'bigint')
    .addColumn('due_at', 'bigint')
    .addColumn('moved_reason', 'text')
    .addColumn('refused_reason', 'text')
    .addColumn('placed_attempt_id', int)
    .addColumn('extracted_json', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('callbacks_campaign_state').on('callbacks').columns(['campaign_id', 'state', 'due_at']).execute();
  await db.schema.createIndex('callbacks_lead').on('callbacks').columns(['lead_id', 'state']).execute();
  await db.schema.alterTable('leads').addColumn('callbacks_given', int, (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').dropColumn('callbacks_given').execute();
  await db.schema.dropTable('callbacks').execute();
}

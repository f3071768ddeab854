import type { Kysely } from 'kysely';
import { integer } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Leads posted through the API (src/api/routes/leads.ts).
//
// `leads.external_id` is the caller's own id of a lead (a CRM's customer number), unique
// within a campaign: posting it again updates that lead while it has not been called, and
// the caller looks the lead up by it. Null for leads from files (a unique index lets any
// number of nulls through on both databases).
//
// `api_idempotency` holds the answer to each POST that carried an `Idempotency-Key`
// header, for 24 hours: a retried request gets the first answer and writes nothing again.
// The row is written in the same transaction as the leads of that answer, and its primary
// key decides between two requests with the same key that run at once (on one instance or
// several sharing a PostgreSQL database): the second waits for the first to commit, fails
// on the key, and answers from the stored row. `owner` is the API key's name ('' without
// keys), so that two clients cannot see each other's answers.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').addColumn('external_id', 'text').execute();
  await db.schema.createIndex('leads_campaign_external_id').on('leads').columns(['campaign_id', 'external_id']).unique().execute();
  await db.schema
    .createTable('api_idempotency')
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    // sha-256 of the request (method, path, body): the same key with another body is refused
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', integer(db), (c) => c.notNull())
    .addColumn('response_json', 'text', (c) => c.notNull())
    // epoch ms, by the daemon's clock
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('api_idempotency_pk', ['owner', 'idempotency_key'])
    .execute();
  // The sweep of expired answers reads by expiry.
  await db.schema.createIndex('api_idempotency_expires').on('api_idempotency').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_idempotency').execute();
  await db.schema.dropIndex('leads_campaign_external_id').execute();
  await db.schema.alterTable('leads').dropColumn('external_id').execute();
}

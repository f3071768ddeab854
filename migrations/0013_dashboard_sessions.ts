import type { Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Dashboard sign-ins (src/store/dashboard-sessions.ts). A session lives in the store, not
// in the cookie, so that signing out ends it on every instance sharing the database and
// an idle one runs out. The cookie holds a random session id; the table holds only its
// keyed hash (HMAC with the dashboard token), so neither a copy of the table nor of the
// cookie gives the token, and a new token ends every session made under the old one.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    // epoch ms, by the daemon's clock
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  // The sweep of expired sessions reads by expiry.
  await db.schema.createIndex('dashboard_sessions_expires').on('dashboard_sessions').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dashboard_sessions').execute();
}

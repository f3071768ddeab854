import { sql, type Kysely } from 'kysely';
import { withId } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Keys of the HTTP API under /api/v1 (src/store/api-keys.ts, src/api/keys.ts). The table
// never holds a key: only its SHA-256 hash, and a short prefix of it that is shown by
// `api-key list` and used to find the row (the prefix alone does not open the API). A
// revoked key keeps its row (revoked_at set) so the list can show what existed, and so
// that revoking the last key does not open the API again on loopback. A name is unique
// among the keys not revoked, so a name can be used again after its key is revoked.

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('api_keys'))
    .addColumn('name', 'text', (c) => c.notNull())
    // 'read' | 'write'
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    // hex SHA-256 of the whole key
    .addColumn('key_hash', 'text', (c) => c.notNull())
    // epoch ms, by the clock of the command or daemon that wrote it
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_active_name').on('api_keys').column('name').unique().where(sql.ref('revoked_at'), 'is', null).execute();
  // Every request finds its key by prefix.
  await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
}

import { type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// `campaignd status` is a separate process from the daemon that owns the rate budget, so
// the budget's counters travel the way the API state does: written into the daemon's row
// with each heartbeat. Counts since that daemon started; one column per statement
// (SQLite's ALTER TABLE adds one column at a time).

const COLUMNS = ['api_requests_sent', 'api_rate_limited', 'budget_wait_ms'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema.alterTable('daemons').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('daemons').dropColumn(column).execute();
}

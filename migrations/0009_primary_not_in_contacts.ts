import { sql, type Kysely } from 'kysely';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// `lead_contacts` held every lead's primary number twice: as `leads.phone_number` and as
// its contact at position 0. From here it holds the secondary numbers only (positions
// 1..); the primary is read from `leads`. Writing that copy was over a third of a lead
// import's cost on PostgreSQL (a row, two index entries and a foreign-key check per lead;
// issue 12 asks ≥ 50k rows/s), and nothing needs it: every reader that named position 0
// falls back to `leads.phone_number` already.

export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('lead_contacts').where('position', '=', 0).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  // Invalid leads never had contacts.
  await sql`insert into lead_contacts (lead_id, position, phone_number, remote_lead_id)
    select id, 0, phone_number, remote_lead_id from leads where state <> 'invalid'`.execute(db);
}

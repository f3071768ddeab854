import { type Kysely, sql } from 'kysely';
import { integer, withId } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
// Times are integer milliseconds since the epoch (bigint on PostgreSQL) so that the
// same queries work on both engines and comparisons never parse strings.

export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  await withId(db, db.schema.createTable('campaigns'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    // running | paused | stopped | completed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('assistant_id', int, (c) => c.notNull())
    // resolved IANA zone of the window (the file's, or the assistant's)
    .addColumn('timezone', 'text')
    .addColumn('max_calls_in_parallel', int, (c) => c.notNull())
    .addColumn('remote_campaign_id', int)
    // the normalised campaign file, so that status/explain work with the daemon down
    .addColumn('config_json', 'text', (c) => c.notNull())
    .addColumn('config_file', 'text')
    // a problem that stops this campaign (bad file, unknown assistant…), null when fine
    .addColumn('problem', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();

  await withId(db, db.schema.createTable('leads'))
    .addColumn('campaign_id', int, (c) => c.notNull().references('campaigns.id').onDelete('cascade'))
    // what makes a row "the same lead" on re-import: the primary number, or the
    // source row when the campaign allows duplicates, or the remote lead id
    .addColumn('dedupe_key', 'text', (c) => c.notNull())
    // E.164 when valid; the raw text when invalid
    .addColumn('phone_number', 'text', (c) => c.notNull())
    .addColumn('variables_json', 'text', (c) => c.notNull().defaultTo('{}'))
    // the called person's IANA zone, for lead_local_hours
    .addColumn('timezone', 'text')
    // pending | calling | retry-scheduled | completed | reached-max-retries | invalid | suppressed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('state_reason', 'text')
    // earliest instant the lead may be dialled again (window aside); null when final
    .addColumn('next_due_at', 'bigint')
    // which contact is being worked: 0 = primary, 1.. = secondary contacts in order
    .addColumn('contact_position', int, (c) => c.notNull().defaultTo(0))
    // counted attempts on the current contact
    .addColumn('contact_attempts', int, (c) => c.notNull().defaultTo(0))
    .addColumn('remote_lead_id', int)
    .addColumn('source_file', 'text')
    .addColumn('source_line', int)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('leads_campaign_dedupe')
    .on('leads')
    .columns(['campaign_id', 'dedupe_key'])
    .unique()
    .execute();
  // The claim query: a campaign's active leads in due order. Partial, so final leads
  // (the bulk of a finished campaign) never weigh on it.
  await db.schema
    .createIndex('leads_due')
    .on('leads')
    .columns(['campaign_id', 'next_due_at', 'id'])
    .where(sql.ref('state'), 'in', ['pending', 'retry-scheduled'])
    .execute();
  await db.schema.createIndex('leads_campaign_state').on('leads').columns(['campaign_id', 'state']).execute();
  await db.schema.createIndex('leads_phone').on('leads').column('phone_number').execute();

  await db.schema
    .createTable('lead_contacts')
    .addColumn('lead_id', int, (c) => c.notNull().references('leads.id').onDelete('cascade'))
    // 0 = primary (same number as leads.phone_number), 1.. = secondary in order
    .addColumn('position', int, (c) => c.notNull())
    .addColumn('phone_number', 'text', (c) => c.notNull())
    .addColumn('remote_lead_id', int)
    .addPrimaryKeyConstraint('lead_contacts_pk', ['lead_id', 'position'])
    .execute();
  await db.schema.createIndex('lead_contacts_phone').on('lead_contacts').column('phone_number').execute();

  await withId(db, db.schema.createTable('attempts'))
    .addColumn('campaign_id', int, (c) => c.notNull().references('campaigns.id').onDelete('cascade'))
    .addColumn('lead_id', int, (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('contact_position', int, (c) => c.notNull())
    .addColumn('phone_number', 'text', (c) => c.notNull())
    .addColumn('assistant_id', int, (c) => c.notNull())
    // dialing (committed; make_call may be in flight) | placed (2xx) | unknown (may exist)
    //   → ended | rejected | withdrawn (not sent: 429, window closed, token rejected; not counted)
    //   | never-placed (unknown, settled as never placed; not counted)
    .addColumn('state', 'text', (c) => c.notNull())
    // 1 when the attempt uses up one of the contact's 1 + max_retries attempts
    .addColumn('counted', int, (c) => c.notNull().defaultTo(1))
    .addColumn('call_id', 'text')
    // the call's final status and answered_by, and the class they map to
    .addColumn('call_status', 'text')
    .addColumn('answered_by', 'text')
    // success | voicemail | busy | no-answer | failed | unknown | rejected | never-placed
    .addColumn('outcome', 'text')
    .addColumn('detail', 'text')
    // where the outcome came from: webhook | poll | answer | timeout | settle. A webhook
    // carries no answered_by, so its success is provisional until a poll confirms it.
    .addColumn('outcome_source', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // when make_call was sent (equal to created_at unless throttled first)
    .addColumn('sent_at', 'bigint')
    .addColumn('answered_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    // for unknown attempts: when, without a matching call, it is settled as never placed
    .addColumn('settle_deadline', 'bigint')
    // which daemon instance owns the in-flight request (fencing after a crash)
    .addColumn('owner', 'text')
    .execute();
  // Rule 3 enforced by the database itself: one live attempt per phone number.
  await db.schema
    .createIndex('attempts_live_phone')
    .on('attempts')
    .column('phone_number')
    .unique()
    .where(sql.ref('state'), 'in', ['dialing', 'placed', 'unknown'])
    .execute();
  await db.schema
    .createIndex('attempts_live_campaign')
    .on('attempts')
    .column('campaign_id')
    .where(sql.ref('state'), 'in', ['dialing', 'placed', 'unknown'])
    .execute();
  await db.schema.createIndex('attempts_lead').on('attempts').columns(['lead_id', 'id']).execute();
  await db.schema.createIndex('attempts_campaign_created').on('attempts').columns(['campaign_id', 'created_at']).execute();
  await db.schema.createIndex('attempts_call_id').on('attempts').column('call_id').execute();
  // The poller binds calls to attempts by number; a number's attempts are few.
  await db.schema.createIndex('attempts_phone').on('attempts').columns(['phone_number', 'id']).execute();

  await withId(db, db.schema.createTable('events'))
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('campaign_id', int)
    .addColumn('lead_id', int)
    .addColumn('attempt_id', int)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data_json', 'text')
    .execute();
  await db.schema.createIndex('events_lead').on('events').columns(['lead_id', 'id']).execute();

  await db.schema
    .createTable('suppressions')
    .addColumn('phone_number', 'text', (c) => c.primaryKey())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('daemons')
    .addColumn('instance_id', 'text', (c) => c.primaryKey())
    .addColumn('pid', int, (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .addColumn('stopped_at', 'bigint')
    // ok | token-rejected | unreachable | unknown
    .addColumn('api_status', 'text', (c) => c.notNull())
    .addColumn('api_detail', 'text')
    // problems of the last config load (broken campaign files), JSON array
    .addColumn('problems_json', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['daemons', 'suppressions', 'events', 'attempts', 'lead_contacts', 'leads', 'campaigns']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

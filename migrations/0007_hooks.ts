import { sql, type Kysely } from 'kysely';
import { integer, isPostgres, withId } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
// (A migration of its own rather than part of 0004: databases already migrated through
// 0004 would never get these tables.)
//
// Hooks (docs/design.md §9): an outbox of events for the systems that use the results.
// `hook_subscriptions` is the daemon config's `hooks` (url × event type), written at start;
// triggers on the state changes themselves write one outbox row per subscribed hook, so
// the event is committed in the very transaction of the change, whichever code path
// makes it (an outcome, a stuck call closed, an import's invalid row, a suppression, a
// campaign completed), and nothing at all is written while no hook is configured.
//
// The tables are portable kysely; the triggers are SQLite (json_object, randomblob), and
// on PostgreSQL the same INSERT … SELECT runs from one PL/pgSQL function per trigger
// (json_build_object, gen_random_uuid(): createPostgresTriggers below).
export async function up(db: Kysely<any>): Promise<void> {
  const int = integer(db);
  await db.schema
    .createTable('hook_subscriptions')
    .addColumn('hook_url', 'text', (c) => c.notNull())
    // attempt.ended | lead.final | campaign.completed
    .addColumn('type', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('hook_subscriptions_pk', ['type', 'hook_url'])
    .execute();
  // id: delivery order, per hook and lead
  await withId(db, db.schema.createTable('hook_outbox'))
    .addColumn('hook_url', 'text', (c) => c.notNull())
    // the body's "id": the same on every retry, for de-duplication by the receiver
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('campaign_id', int)
    .addColumn('lead_id', int)
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // the JSON body; null once erased (`campaignd forget`, retention)
    .addColumn('body', 'text')
    .addColumn('tries', int, (c) => c.notNull().defaultTo(0))
    .addColumn('next_try_at', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .execute();
  await db.schema.createIndex('hook_outbox_hook').on('hook_outbox').columns(['hook_url', 'id']).execute();
  await db.schema.createIndex('hook_outbox_lead').on('hook_outbox').columns(['lead_id']).execute();
  // A hook that answered 410 Gone: nothing more is sent to it (status shows it).
  await db.schema
    .createTable('hook_states')
    .addColumn('hook_url', 'text', (c) => c.primaryKey())
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .execute();

  if (isPostgres(db)) await createPostgresTriggers(db);
  else await createSqliteTriggers(db);
}

async function createSqliteTriggers(db: Kysely<any>): Promise<void> {
  const iso = (ms: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', (${ms}) / 1000.0, 'unixepoch')`;
  const campaignJson = (id: string) => `(select json_object('id', c.id, 'name', c.name, 'state', c.state) from campaigns c where c.id = ${id})`;
  const leadJson = (id: string) =>
    `(select json_object('id', l.id, 'phone_number', l.phone_number, 'state', l.state, 'state_reason', l.state_reason, 'variables', json(l.variables_json)) from leads l where l.id = ${id})`;
  const attemptJson = (id: string) => `(select json_object(
      'id', a.id, 'phone_number', a.phone_number, 'contact_position', a.contact_position, 'state', a.state, 'outcome', a.outcome,
      'call_id', a.call_id, 'call_status', coalesce(r.status, a.call_status), 'answered_by', coalesce(a.answered_by, r.answered_by),
      'sent_at', ${iso('coalesce(a.sent_at, a.created_at)')}, 'ended_at', ${iso('a.ended_at')}, 'duration_seconds', r.duration_seconds,
      'cost', r.cost, 'recording_url', r.recording_url, 'transcript', json(r.transcript_json), 'extracted_variables', json(r.extracted_json),
      'evaluation', json(r.evaluation_json))
    from attempts a left join call_results r on r.attempt_id = a.id where a.id = ${id})`;
  const lastAttemptJson = (leadId: string) => attemptJson(`(select max(x.id) from attempts x where x.lead_id = ${leadId} and x.state = 'ended')`);
  const insert = (type: string, at: string, campaignId: string, leadId: string, data: string) => `
      INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
      SELECT s.hook_url, e.id, '${type}', ${campaignId}, ${leadId}, ${at},
        json_object('id', e.id, 'type', '${type}', 'created_at', ${iso(at)}, 'data', json(${data})), ${at}
      FROM hook_subscriptions s, (SELECT lower(hex(randomblob(16))) AS id) e
      WHERE s.type = '${type}';`;
  const FINAL = `('completed', 'reached-max-retries', 'invalid', 'suppressed')`;

  await sql
    .raw(
      `CREATE TRIGGER hooks_attempt_ended AFTER UPDATE OF state ON attempts
       WHEN NEW.state = 'ended' AND OLD.state IS NOT 'ended'
       BEGIN ${insert('attempt.ended', 'coalesce(NEW.ended_at, 0)', 'NEW.campaign_id', 'NEW.lead_id', `json_object('campaign', json(${campaignJson('NEW.campaign_id')}), 'lead', json(${leadJson('NEW.lead_id')}), 'attempt', json(${attemptJson('NEW.id')}))`)} END`,
    )
    .execute(db);
  const leadFinal = `json_object('campaign', json(${campaignJson('NEW.campaign_id')}), 'lead', json(${leadJson('NEW.id')}), 'attempt', json(${lastAttemptJson('NEW.id')}))`;
  await sql
    .raw(
      `CREATE TRIGGER hooks_lead_final AFTER UPDATE OF state ON leads
       WHEN NEW.state IN ${FINAL} AND OLD.state NOT IN ${FINAL}
       BEGIN ${insert('lead.final', 'NEW.updated_at', 'NEW.campaign_id', 'NEW.id', leadFinal)} END`,
    )
    .execute(db);
  // Leads final from the start: invalid rows of an import, numbers already suppressed.
  await sql
    .raw(
      `CREATE TRIGGER hooks_lead_final_insert AFTER INSERT ON leads
       WHEN NEW.state IN ${FINAL}
       BEGIN ${insert('lead.final', 'NEW.updated_at', 'NEW.campaign_id', 'NEW.id', leadFinal)} END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER hooks_campaign_completed AFTER UPDATE OF state ON campaigns
       WHEN NEW.state = 'completed' AND OLD.state IS NOT 'completed'
       BEGIN ${insert('campaign.completed', 'coalesce(NEW.completed_at, NEW.updated_at)', 'NEW.id', 'NULL', `json_object('campaign', json(${campaignJson('NEW.id')}), 'lead', json('null'), 'attempt', json('null'))`)} END`,
    )
    .execute(db);
}

/** The same four triggers on PostgreSQL, each running a function of its own; bodies built alike. */
async function createPostgresTriggers(db: Kysely<any>): Promise<void> {
  const iso = (ms: string) => `to_char((timestamptz 'epoch' + (${ms}) * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const campaignJson = (id: string) => `(select json_build_object('id', c.id, 'name', c.name, 'state', c.state) from campaigns c where c.id = ${id})`;
  const leadJson = (id: string) =>
    `(select json_build_object('id', l.id, 'phone_number', l.phone_number, 'state', l.state, 'state_reason', l.state_reason, 'variables', l.variables_json::json) from leads l where l.id = ${id})`;
  const attemptJson = (id: string) => `(select json_build_object(
      'id', a.id, 'phone_number', a.phone_number, 'contact_position', a.contact_position, 'state', a.state, 'outcome', a.outcome,
      'call_id', a.call_id, 'call_status', coalesce(r.status, a.call_status), 'answered_by', coalesce(a.answered_by, r.answered_by),
      'sent_at', ${iso('coalesce(a.sent_at, a.created_at)')}, 'ended_at', ${iso('a.ended_at')}, 'duration_seconds', r.duration_seconds,
      'cost', r.cost, 'recording_url', r.recording_url, 'transcript', r.transcript_json::json, 'extracted_variables', r.extracted_json::json,
      'evaluation', r.evaluation_json::json)
    from attempts a left join call_results r on r.attempt_id = a.id where a.id = ${id})`;
  const lastAttemptJson = (leadId: string) => attemptJson(`(select max(x.id) from attempts x where x.lead_id = ${leadId} and x.state = 'ended')`);
  const insert = (type: string, at: string, campaignId: string, leadId: string, data: string) => `
      INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
      SELECT s.hook_url, e.id, '${type}', ${campaignId}, ${leadId}, ${at},
        json_build_object('id', e.id, 'type', '${type}', 'created_at', ${iso(at)}, 'data', ${data})::text, ${at}
      FROM hook_subscriptions s, (SELECT replace(gen_random_uuid()::text, '-', '') AS id) e
      WHERE s.type = '${type}';`;
  const FINAL = `('completed', 'reached-max-retries', 'invalid', 'suppressed')`;
  const leadFinal = `json_build_object('campaign', ${campaignJson('NEW.campaign_id')}, 'lead', ${leadJson('NEW.id')}, 'attempt', ${lastAttemptJson('NEW.id')})`;
  const triggers = [
    {
      name: 'hooks_attempt_ended',
      on: 'UPDATE OF state ON attempts',
      when: `NEW.state = 'ended' AND OLD.state IS DISTINCT FROM 'ended'`,
      body: insert(
        'attempt.ended',
        'coalesce(NEW.ended_at, 0)',
        'NEW.campaign_id',
        'NEW.lead_id',
        `json_build_object('campaign', ${campaignJson('NEW.campaign_id')}, 'lead', ${leadJson('NEW.lead_id')}, 'attempt', ${attemptJson('NEW.id')})`,
      ),
    },
    { name: 'hooks_lead_final', on: 'UPDATE OF state ON leads', when: `NEW.state IN ${FINAL} AND OLD.state NOT IN ${FINAL}`, body: insert('lead.final', 'NEW.updated_at', 'NEW.campaign_id', 'NEW.id', leadFinal) },
    { name: 'hooks_lead_final_insert', on: 'INSERT ON leads', when: `NEW.state IN ${FINAL}`, body: insert('lead.final', 'NEW.updated_at', 'NEW.campaign_id', 'NEW.id', leadFinal) },
    {
      name: 'hooks_campaign_completed',
      on: 'UPDATE OF state ON campaigns',
      when: `NEW.state = 'completed' AND OLD.state IS DISTINCT FROM 'completed'`,
      body: insert(
        'campaign.completed',
        'coalesce(NEW.completed_at, NEW.updated_at)',
        'NEW.id',
        'NULL::bigint',
        `json_build_object('campaign', ${campaignJson('NEW.id')}, 'lead', NULL::json, 'attempt', NULL::json)`,
      ),
    },
  ];
  for (const t of triggers) {
    await sql.raw(`CREATE FUNCTION ${t.name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${t.body} RETURN NULL; END $$`).execute(db);
    await sql.raw(`CREATE TRIGGER ${t.name} AFTER ${t.on} FOR EACH ROW WHEN (${t.when}) EXECUTE FUNCTION ${t.name}()`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const trigger of ['hooks_attempt_ended', 'hooks_lead_final', 'hooks_lead_final_insert', 'hooks_campaign_completed']) {
    if (isPostgres(db)) await sql.raw(`DROP FUNCTION IF EXISTS ${trigger}() CASCADE`).execute(db);
    else await sql.raw(`DROP TRIGGER IF EXISTS ${trigger}`).execute(db);
  }
  for (const table of ['hook_states', 'hook_outbox', 'hook_subscriptions']) await db.schema.dropTable(table).ifExists().execute();
}

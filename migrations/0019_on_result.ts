import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Rules on the result (README, "On the result"): a `move_to` rule ends a lead in the new
// state `moved` (leads.state is free text, so no column changes). Hooks learn of it as
// `lead.moved`, written by a trigger in the very transaction that moved the lead, as the
// other hook events are (0007_hooks). Its body is lead.final's: the campaign, the lead
// (whose state_reason names the rule and the target campaign's lead) and its last attempt.
// The JSON helpers are repeated from 0007 on purpose: a migration never imports code that
// may change after it shipped.

const TRIGGER = 'hooks_lead_moved';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await createPostgresTrigger(db);
  else await createSqliteTrigger(db);
}

async function createSqliteTrigger(db: Kysely<any>): Promise<void> {
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
  const lastAttempt = attemptJson(`(select max(x.id) from attempts x where x.lead_id = NEW.id and x.state = 'ended')`);
  const data = `json_object('campaign', json(${campaignJson('NEW.campaign_id')}), 'lead', json(${leadJson('NEW.id')}), 'attempt', json(${lastAttempt}))`;
  await sql
    .raw(
      `CREATE TRIGGER ${TRIGGER} AFTER UPDATE OF state ON leads
       WHEN NEW.state = 'moved' AND OLD.state IS NOT 'moved'
       BEGIN
         INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
         SELECT s.hook_url, e.id, 'lead.moved', NEW.campaign_id, NEW.id, NEW.updated_at,
           json_object('id', e.id, 'type', 'lead.moved', 'created_at', ${iso('NEW.updated_at')}, 'data', json(${data})), NEW.updated_at
         FROM hook_subscriptions s, (SELECT lower(hex(randomblob(16))) AS id) e
         WHERE s.type = 'lead.moved';
       END`,
    )
    .execute(db);
}

async function createPostgresTrigger(db: Kysely<any>): Promise<void> {
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
  const lastAttempt = attemptJson(`(select max(x.id) from attempts x where x.lead_id = NEW.id and x.state = 'ended')`);
  const data = `json_build_object('campaign', ${campaignJson('NEW.campaign_id')}, 'lead', ${leadJson('NEW.id')}, 'attempt', ${lastAttempt})`;
  const body = `
      INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
      SELECT s.hook_url, e.id, 'lead.moved', NEW.campaign_id, NEW.id, NEW.updated_at,
        json_build_object('id', e.id, 'type', 'lead.moved', 'created_at', ${iso('NEW.updated_at')}, 'data', ${data})::text, NEW.updated_at
      FROM hook_subscriptions s, (SELECT replace(gen_random_uuid()::text, '-', '') AS id) e
      WHERE s.type = 'lead.moved';`;
  await sql.raw(`CREATE FUNCTION ${TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  await sql
    .raw(`CREATE TRIGGER ${TRIGGER} AFTER UPDATE OF state ON leads FOR EACH ROW WHEN (NEW.state = 'moved' AND OLD.state IS DISTINCT FROM 'moved') EXECUTE FUNCTION ${TRIGGER}()`)
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await sql.raw(`DROP FUNCTION IF EXISTS ${TRIGGER}() CASCADE`).execute(db);
  else await sql.raw(`DROP TRIGGER IF EXISTS ${TRIGGER}`).execute(db);
}

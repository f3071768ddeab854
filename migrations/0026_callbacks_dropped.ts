import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';

// Frozen in time: never edit a migration that has shipped; add a new one instead.
//
// Callbacks the person asks for (README, "Callbacks the person asks for"), two additions:
//
// 1. A scheduled callback whose lead then ends otherwise (cancelled, suppressed, made
//    invalid, moved, completed, out of attempts) is `dropped`, with `dropped_reason`
//    naming the lead's final state and its reason. Lead states are written in many
//    places (the API's cancel, the suppression list, on_result rules, the pre-dial
//    check…), so one trigger on the lead's state does it, in the very transaction that
//    ended the lead, and no writer can forget it. Rows stuck `scheduled` on a lead that
//    ended before this migration are dropped by it.
// 2. Hooks learn of a scheduled callback as `lead.callback_scheduled`, written by a
//    trigger on the callback's row, so in the transaction that recorded the asking
//    call's outcome, as the other hook events are (0007_hooks, 0019_on_result). Its body:
//    the campaign, the lead, the callback (the words, the zone, the asked and scheduled
//    moments in UTC, why they differ) and the asking attempt. The JSON helpers are
//    repeated from 0019 on purpose: a migration never imports code that may change.

const FINAL = `('completed', 'reached-max-retries', 'invalid', 'suppressed', 'cancelled', 'moved')`;
const DROP = 'callbacks_dropped';
const HOOK = 'hooks_lead_callback_scheduled';
const EVENT = 'lead.callback_scheduled';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('callbacks').addColumn('dropped_reason', 'text').execute();
  const reason = (lead: string) => `'lead ' || ${lead}.state || coalesce(': ' || ${lead}.state_reason, '')`;
  await sql
    .raw(
      `UPDATE callbacks SET state = 'dropped', dropped_reason = (SELECT ${reason('l')} FROM leads l WHERE l.id = callbacks.lead_id)
       WHERE state = 'scheduled' AND lead_id IN (SELECT id FROM leads WHERE state IN ${FINAL})`,
    )
    .execute(db);
  const drop = `UPDATE callbacks SET state = 'dropped', dropped_reason = ${reason('NEW')}, updated_at = NEW.updated_at
       WHERE lead_id = NEW.id AND state = 'scheduled';`;
  const when = `NEW.state IN ${FINAL} AND OLD.state NOT IN ${FINAL}`;
  if (isPostgres(db)) {
    await sql.raw(`CREATE FUNCTION ${DROP}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${drop} RETURN NULL; END $$`).execute(db);
    await sql.raw(`CREATE TRIGGER ${DROP} AFTER UPDATE OF state ON leads FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${DROP}()`).execute(db);
    await createPostgresHook(db);
  } else {
    await sql.raw(`CREATE TRIGGER ${DROP} AFTER UPDATE OF state ON leads WHEN ${when} BEGIN ${drop} END`).execute(db);
    await createSqliteHook(db);
  }
}

async function createSqliteHook(db: Kysely<any>): Promise<void> {
  const iso = (ms: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', (${ms}) / 1000.0, 'unixepoch')`;
  const campaignJson = `(select json_object('id', c.id, 'name', c.name, 'state', c.state) from campaigns c where c.id = NEW.campaign_id)`;
  const leadJson = `(select json_object('id', l.id, 'phone_number', l.phone_number, 'state', l.state, 'state_reason', l.state_reason, 'variables', json(l.variables_json)) from leads l where l.id = NEW.lead_id)`;
  const callbackJson = `json_object('id', NEW.id, 'asked', NEW.asked, 'zone', NEW.zone, 'asked_at', ${iso('NEW.asked_at')}, 'scheduled_at', ${iso('NEW.due_at')}, 'moved_reason', NEW.moved_reason)`;
  const attemptJson = `(select json_object(
      'id', a.id, 'phone_number', a.phone_number, 'contact_position', a.contact_position, 'state', a.state, 'outcome', a.outcome,
      'call_id', a.call_id, 'call_status', coalesce(r.status, a.call_status), 'answered_by', coalesce(a.answered_by, r.answered_by),
      'sent_at', ${iso('coalesce(a.sent_at, a.created_at)')}, 'ended_at', ${iso('a.ended_at')}, 'duration_seconds', r.duration_seconds,
      'cost', r.cost, 'recording_url', r.recording_url, 'transcript', json(r.transcript_json), 'extracted_variables', json(r.extracted_json),
      'evaluation', json(r.evaluation_json))
    from attempts a left join call_results r on r.attempt_id = a.id where a.id = NEW.attempt_id)`;
  const data = `json_object('campaign', json(${campaignJson}), 'lead', json(${leadJson}), 'callback', json(${callbackJson}), 'attempt', json(${attemptJson}))`;
  await sql
    .raw(
      `CREATE TRIGGER ${HOOK} AFTER INSERT ON callbacks
       WHEN NEW.state = 'scheduled'
       BEGIN
         INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
         SELECT s.hook_url, e.id, '${EVENT}', NEW.campaign_id, NEW.lead_id, NEW.created_at,
           json_object('id', e.id, 'type', '${EVENT}', 'created_at', ${iso('NEW.created_at')}, 'data', json(${data})), NEW.created_at
         FROM hook_subscriptions s, (SELECT lower(hex(randomblob(16))) AS id) e
         WHERE s.type = '${EVENT}';
       END`,
    )
    .execute(db);
}

async function createPostgresHook(db: Kysely<any>): Promise<void> {
  const iso = (ms: string) => `to_char((timestamptz 'epoch' + (${ms}) * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const campaignJson = `(select json_build_object('id', c.id, 'name', c.name, 'state', c.state) from campaigns c where c.id = NEW.campaign_id)`;
  const leadJson = `(select json_build_object('id', l.id, 'phone_number', l.phone_number, 'state', l.state, 'state_reason', l.state_reason, 'variables', l.variables_json::json) from leads l where l.id = NEW.lead_id)`;
  const callbackJson = `json_build_object('id', NEW.id, 'asked', NEW.asked, 'zone', NEW.zone, 'asked_at', ${iso('NEW.asked_at')}, 'scheduled_at', ${iso('NEW.due_at')}, 'moved_reason', NEW.moved_reason)`;
  const attemptJson = `(select json_build_object(
      'id', a.id, 'phone_number', a.phone_number, 'contact_position', a.contact_position, 'state', a.state, 'outcome', a.outcome,
      'call_id', a.call_id, 'call_status', coalesce(r.status, a.call_status), 'answered_by', coalesce(a.answered_by, r.answered_by),
      'sent_at', ${iso('coalesce(a.sent_at, a.created_at)')}, 'ended_at', ${iso('a.ended_at')}, 'duration_seconds', r.duration_seconds,
      'cost', r.cost, 'recording_url', r.recording_url, 'transcript', r.transcript_json::json, 'extracted_variables', r.extracted_json::json,
      'evaluation', r.evaluation_json::json)
    from attempts a left join call_results r on r.attempt_id = a.id where a.id = NEW.attempt_id)`;
  const data = `json_build_object('campaign', ${campaignJson}, 'lead', ${leadJson}, 'callback', ${callbackJson}, 'attempt', ${attemptJson})`;
  const body = `
      INSERT INTO hook_outbox (hook_url, event_id, type, campaign_id, lead_id, created_at, body, next_try_at)
      SELECT s.hook_url, e.id, '${EVENT}', NEW.campaign_id, NEW.lead_id, NEW.created_at,
        json_build_object('id', e.id, 'type', '${EVENT}', 'created_at', ${iso('NEW.created_at')}, 'data', ${data})::text, NEW.created_at
      FROM hook_subscriptions s, (SELECT replace(gen_random_uuid()::text, '-', '') AS id) e
      WHERE s.type = '${EVENT}';`;
  await sql.raw(`CREATE FUNCTION ${HOOK}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  await sql.raw(`CREATE TRIGGER ${HOOK} AFTER INSERT ON callbacks FOR EACH ROW WHEN (NEW.state = 'scheduled') EXECUTE FUNCTION ${HOOK}()`).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of [HOOK, DROP]) {
    if (isPostgres(db)) await sql.raw(`DROP FUNCTION IF EXISTS ${name}() CASCADE`).execute(db);
    else await sql.raw(`DROP TRIGGER IF EXISTS ${name}`).execute(db);
  }
  await sql.raw(`UPDATE callbacks SET state = 'scheduled' WHERE state = 'dropped'`).execute(db);
  await db.schema.alterTable('callbacks').dropColumn('dropped_reason').execute();
}

// One lead as the API shows it (src/store/lead-view.ts). On PostgreSQL the view is ONE
// statement whose parts come back as JSON; these tests hold it to what plain reads of the
// same rows give, column by column and in order, so that a number never turns into a string
// (or a float into an integer) on the way.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { leadView } from '../../src/store/lead-view.js';
import type { OutcomeClass } from '../../src/store/types.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';

let store: DatabaseHandle;

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  const { db } = store;
  await db.insertInto('campaigns').values({ id: 1, name: 'spring', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
  for (const id of [1, 2]) {
    await db.insertInto('leads').values({ id, campaign_id: 1, dedupe_key: `+491511234567${id}`, phone_number: `+491511234567${id}`, state: 'retry-scheduled', state_reason: 'no answer', next_due_at: 1_700_000_000_123, remote_lead_id: null, source_file: 'api', source_line: null, timezone: 'Europe/Berlin', created_at: 5, updated_at: 6 }).execute();
  }
  // Secondary numbers out of order, and the primary (position 0), which the view leaves out.
  await db.insertInto('lead_contacts').values([
    { lead_id: 1, position: 2, phone_number: '+4930222' },
    { lead_id: 1, position: 0, phone_number: '+4915112345671' },
    { lead_id: 1, position: 1, phone_number: '+4930111' },
  ]).execute();
  const attempt = (id: number, leadId: number, outcome: OutcomeClass | null) => ({ id, campaign_id: 1, lead_id: leadId, contact_position: 0, phone_number: `+491511234567${leadId}`, assistant_id: 7, state: outcome ? ('ended' as const) : ('placed' as const), call_id: String(100 + id), call_status: outcome ? 'completed' : null, answered_by: outcome ? 'human' : null, outcome, detail: null, outcome_source: outcome ? ('webhook' as const) : null, created_at: 1_700_000_000_000 + id, sent_at: 1_700_000_000_500 + id, answered_at: null, ended_at: outcome ? 1_700_000_060_000 + id : null, settle_deadline: null, owner: null });
  await db.insertInto('attempts').values([attempt(3, 1, 'no-answer'), attempt(1, 1, 'success'), attempt(2, 2, null), attempt(4, 1, null)]).execute();
  const result = (attemptId: number, cost: number | null) => ({ attempt_id: attemptId, campaign_id: 1, lead_id: 1, call_id: String(100 + attemptId), status: 'completed', answered_by: 'human', duration_seconds: 30.5, started_at: 1_700_000_000_600, ended_at: 1_700_000_060_000, cost, recording_url: null, transcript_json: '[{"text":"Hi","sender":"AI"}]', extracted_json: '{"interested":"yes"}', evaluation_json: null, source: 'webhook,poll' as const, received_at: 10, updated_at: 20, erased_at: null });
  await db.insertInto('call_results').values([result(1, 0.2), result(3, null)]).execute();
});
afterEach(async () => store.close());

describe('store: the lead view', () => {
  it('gives the row, its campaign, its secondary numbers in order, its attempts in order and its latest result, as plain reads do', async () => {
    const { db } = store;
    const view = await leadView(db, 1);
    expect(view).toBeDefined();
    expect(view!.lead).toEqual(await db.selectFrom('leads').selectAll().where('id', '=', 1).executeTakeFirstOrThrow());
    expect(view!.campaign).toBe('spring');
    expect(view!.secondary).toEqual(['+4930111', '+4930222']);
    const attempts = await db.selectFrom('attempts').selectAll().where('lead_id', '=', 1).orderBy('id').execute();
    expect(view!.attempts).toEqual(attempts);
    expect(view!.attempts.map((a) => a.id)).toEqual([1, 3, 4]);
    // The latest attempt with a result is 3 (4 has none): its result, a null cost kept null.
    expect(view!.result).toEqual(await db.selectFrom('call_results').selectAll().where('attempt_id', '=', 3).executeTakeFirstOrThrow());
    expect(typeof view!.attempts[0]!.created_at).toBe('number');
    expect(view!.result!.duration_seconds).toBe(30.5);
  });

  it('a lead without contacts, attempts or a result has empty lists and no result; an unknown id has no view', async () => {
    const view = await leadView(store.db, 2);
    expect(view).toMatchObject({ campaign: 'spring', secondary: [], result: null });
    expect(view!.attempts.map((a) => a.id)).toEqual([2]);
    await store.db.deleteFrom('attempts').where('lead_id', '=', 2).execute();
    expect((await leadView(store.db, 2))!.attempts).toEqual([]);
    expect(await leadView(store.db, 999)).toBeUndefined();
  });
});

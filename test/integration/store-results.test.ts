import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { callResultOf, mergeCallResult } from '../../src/store/results.js';
import { forgetNumber, LiveCallError } from '../../src/store/results-forget.js';
import { readGivenCall } from '../../src/results/given.js';
import { ManualClock } from '../../src/time/clock.js';

let store: DatabaseHandle;
const owner = { attemptId: 1, campaignId: 1, leadId: 1 };

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(0) });
  const { db } = store;
  await db.insertInto('campaigns').values({ id: 1, name: 'c', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null }).execute();
  await db.insertInto('leads').values({ id: 1, campaign_id: 1, dedupe_key: '+4915112345678', phone_number: '+4915112345678', state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0 }).execute();
  await db.insertInto('attempts').values({ id: 1, campaign_id: 1, lead_id: 1, contact_position: 0, phone_number: '+4915112345678', assistant_id: 1, state: 'placed', call_id: '9', call_status: null, answered_by: null, outcome: null, detail: null, outcome_source: null, created_at: 0, sent_at: 0, answered_at: null, ended_at: null, settle_deadline: null, owner: null }).execute();
});
afterEach(async () => store.close());

describe('store: call results', () => {
  it('the first source fills the row, the other completes it; a known field is never overwritten by null', async () => {
    const webhook = readGivenCall({ id: 9, status: 'completed', duration: 30, transcript: [{ text: 'Hi', sender: 'AI' }], extracted_variables: { interested: true } }, 'UTC');
    await mergeCallResult(store.db, owner, webhook.fields, { source: 'webhook', now: 10, keepTranscripts: true });
    const poll = readGivenCall({ id: 9, status: 'completed', duration: null, answered_by: 'human', cost: 0.2, transcript: 'AI: Hi', recording_url: 'https://rec.example/9.mp3' }, 'UTC');
    await mergeCallResult(store.db, owner, poll.fields, { source: 'poll', now: 20, keepTranscripts: true });
    const row = await callResultOf(store.db, 1);
    expect(row).toMatchObject({
      status: 'completed',
      duration_seconds: 30,
      answered_by: 'human',
      cost: 0.2,
      recording_url: 'https://rec.example/9.mp3',
      transcript_json: JSON.stringify([{ text: 'Hi', sender: 'AI' }]),
      extracted_json: '{"interested":true}',
      source: 'webhook,poll',
      received_at: 10,
      updated_at: 20,
    });
    // A third delivery (a duplicate webhook) changes no field and no source.
    await mergeCallResult(store.db, owner, readGivenCall({ id: 9, status: 'failed' }, 'UTC').fields, { source: 'webhook', now: 30, keepTranscripts: true });
    expect(await callResultOf(store.db, 1)).toMatchObject({ status: 'completed', source: 'webhook,poll', duration_seconds: 30 });
  });

  it('keep_transcripts: false stores everything but the transcript', async () => {
    await mergeCallResult(store.db, owner, readGivenCall({ status: 'completed', transcript: 'secret words', extracted_variables: { a: 1 } }, 'UTC').fields, { source: 'poll', now: 1, keepTranscripts: false });
    expect(await callResultOf(store.db, 1)).toMatchObject({ transcript_json: null, extracted_json: '{"a":1}', status: 'completed' });
  });

  it('fields erased (retention, forget) are not filled again by a later delivery', async () => {
    await mergeCallResult(store.db, owner, readGivenCall({ status: 'completed', transcript: 'words' }, 'UTC').fields, { source: 'webhook', now: 1, keepTranscripts: true });
    await store.db.updateTable('call_results').set({ transcript_json: null, erased_at: 2 }).execute();
    await mergeCallResult(store.db, owner, readGivenCall({ status: 'completed', transcript: 'words', recording_url: 'https://r.example/1' }, 'UTC').fields, { source: 'poll', now: 3, keepTranscripts: true });
    expect(await callResultOf(store.db, 1)).toMatchObject({ transcript_json: null, recording_url: null, erased_at: 2 });
  });

  it('forget refuses a number whose call is in progress and changes nothing', async () => {
    await expect(forgetNumber(store.db, '+4915112345678', { now: 5, keepCalling: false })).rejects.toBeInstanceOf(LiveCallError);
    expect(await store.db.selectFrom('leads').select(['phone_number', 'variables_json']).execute()).toEqual([{ phone_number: '+4915112345678', variables_json: '{}' }]);
    expect(await store.db.selectFrom('suppressions').selectAll().execute()).toEqual([]);
  });
});

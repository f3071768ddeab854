// The retention sweep on a ManualClock: results and final leads older than
// results.retention_days lose their personal data, counts stay, newer ones are untouched.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { mergeCallResult } from '../../src/store/results.js';
import { readGivenCall } from '../../src/results/given.js';
import { startRetentionSweeps, sweepRetention } from '../../src/results/retention.js';
import { silentLogger } from '../../src/log/logger.js';
import { ManualClock } from '../../src/time/clock.js';
import { waitUntil } from '../helpers/wait.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
let store: DatabaseHandle;

async function seed(db: DatabaseHandle['db']): Promise<void> {
  await db.insertInto('campaigns').values({ id: 1, name: 'c', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, remote_campaign_id: null, config_json: '{}', config_file: null, problem: null, created_at: T0, updated_at: T0 }).execute();
  // Lead 1 finished on day 0, lead 2 finished on day 50, lead 3 still pending since day 0.
  const leads = [
    { id: 1, state: 'completed' as const, updated_at: T0 },
    { id: 2, state: 'completed' as const, updated_at: T0 + 50 * DAY },
    { id: 3, state: 'pending' as const, updated_at: T0 },
  ];
  for (const l of leads) {
    await db.insertInto('leads').values({ ...l, campaign_id: 1, dedupe_key: `k${l.id}`, phone_number: `+1202555000${l.id}`, variables_json: '{"name":"Ada"}', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: T0 }).execute();
  }
  for (const [attempt, lead, day] of [[1, 1, 0], [2, 2, 50]] as const) {
    await db.insertInto('attempts').values({ id: attempt, campaign_id: 1, lead_id: lead, contact_position: 0, phone_number: `+1202555000${lead}`, assistant_id: 1, state: 'ended', call_id: String(attempt), outcome: 'success', created_at: T0 + day * DAY }).execute();
    const given = readGivenCall({ status: 'completed', duration: 10, transcript: 'Ada said yes', recording_url: 'https://r.example/1', extracted_variables: { yes: true }, evaluation: { score: 1 } }, 'UTC');
    await mergeCallResult(db, { attemptId: attempt, campaignId: 1, leadId: lead }, given.fields, { source: 'poll', now: T0 + day * DAY, keepTranscripts: true });
  }
}

beforeEach(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: new ManualClock(T0) });
  await seed(store.db);
});
afterEach(async () => store.close());

describe('results: retention', () => {
  it('erases what is older than retention_days and keeps the counts', async () => {
    // Hook events still undelivered (a receiver down for long): the old one loses its body.
    for (const [id, day] of [['old', 0], ['new', 50]] as const) {
      await store.db.insertInto('hook_outbox').values({ hook_url: 'https://crm.example/h', event_id: id, type: 'lead.final', campaign_id: 1, lead_id: 1, created_at: T0 + day * DAY, body: '{"lead":"Ada"}', next_try_at: T0 }).execute();
    }
    const clock = new ManualClock(T0 + 91 * DAY);
    const erased = await sweepRetention({ db: store.db, clock, logger: silentLogger(), retentionDays: 90 });
    expect(erased).toEqual({ results: 1, leads: 1 });
    const results = await store.db.selectFrom('call_results').selectAll().orderBy('attempt_id').execute();
    expect(results[0]).toMatchObject({ transcript_json: null, recording_url: null, extracted_json: null, evaluation_json: null, erased_at: T0 + 91 * DAY, status: 'completed', duration_seconds: 10 });
    expect(results[1]).toMatchObject({ transcript_json: '"Ada said yes"', erased_at: null });
    const leads = await store.db.selectFrom('leads').select(['id', 'variables_json', 'state']).orderBy('id').execute();
    expect(leads).toEqual([
      { id: 1, variables_json: '{}', state: 'completed' },
      { id: 2, variables_json: '{"name":"Ada"}', state: 'completed' },
      // Still to be called: make_call needs its variables.
      { id: 3, variables_json: '{"name":"Ada"}', state: 'pending' },
    ]);
    expect(await store.db.selectFrom('attempts').select('id').execute()).toHaveLength(2);
    expect(await store.db.selectFrom('hook_outbox').select(['event_id', 'body']).orderBy('id').execute()).toEqual([
      { event_id: 'old', body: null },
      { event_id: 'new', body: '{"lead":"Ada"}' },
    ]);
    expect(await sweepRetention({ db: store.db, clock, logger: silentLogger(), retentionDays: 90 })).toEqual({ results: 0, leads: 0 });
  });

  it('the daemon sweeps on its own schedule: a minute after start, then hourly', async () => {
    const clock = new ManualClock(T0 + 100 * DAY);
    const stop = startRetentionSweeps({ db: store.db, clock, logger: silentLogger(), retentionDays: 90 });
    try {
      const erasedCount = async () => (await store.db.selectFrom('call_results').select('attempt_id').where('erased_at', 'is not', null).execute()).length;
      await clock.advance(59_000);
      expect(await erasedCount()).toBe(0);
      await clock.advance(1_000);
      await waitUntil(async () => (await erasedCount()) === 1, { message: 'the first sweep' });
      // The next sweep is scheduled when this one has finished (a few more round trips on PostgreSQL).
      await waitUntil(() => clock.pending() === 1, { message: 'the next sweep to be scheduled' });
      // An hour later the next sweep runs, and schedules the one after it.
      await clock.advance(3600_000);
      await waitUntil(() => clock.pending() === 1, { message: 'the hourly sweep to be scheduled again' });
      // Forty days later the second result is past the limit too; the hourly sweep takes it.
      // (Time jumps to just before it rather than firing ~1,000 sweeps of real round trips.)
      clock.jump(41 * DAY - 3600_000);
      await clock.advance(3600_000);
      await waitUntil(async () => (await erasedCount()) === 2, { message: 'a later hourly sweep' });
    } finally {
      stop();
    }
  });
});

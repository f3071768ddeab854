// The results export shows callbacks (README, "Callbacks the person asks for"): each call's
// asked words with the scheduled moment or the reason it was refused, what became of the
// callback, and whether the call was itself a callback's call; the CSV's record shows the
// last call's, JSONL's attempt_history every call's. `forget` and retention erase the
// person's words there as they erase the call's extracted variables. On both databases.
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportResults } from '../../src/results/export.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { CallbackNote } from '../../src/store/callbacks.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { leadAfterOutcome, type LeadDecision } from '../../src/store/lead-transitions.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { forgetNumber } from '../../src/store/results-forget.js';
import { eraseBefore } from '../../src/store/results-retention.js';
import type { AttemptRow } from '../../src/store/types.js';
import { systemClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = Date.UTC(2026, 10, 20, 9, 0, 0);
const HOUR = 3_600_000;
const ASKER = '+12025550401';
const REFUSED = '+12025550402';

describe('callbacks in the results export', () => {
  let h: DatabaseHandle;
  let campaignId: number;
  beforeEach(async () => {
    h = await openTestStore();
    await migrateToLatest(h.db, { clock: systemClock });
    campaignId = (await upsertCampaign(h.db, testCampaignConfig('main', { callbacks: { variable: 'callback_at', maxPerLead: 2, horizonDays: 30 } }), { timezone: 'UTC' }, NOW)).id;
    // ASKER: asks in its first call, is called back (the second call asks nothing), completes.
    const asker = await lead(ASKER);
    const first = await call(asker, ASKER, NOW);
    const asked: CallbackNote = { asked: 'tomorrow at 7 am', zone: 'UTC', askedAt: NOW + 22 * HOUR, dueAt: NOW + 24 * HOUR, movedReason: 'outside the campaign window', refusedReason: null, extracted: {} };
    await end(first, { kind: 'callback', nextDueAt: NOW + 22 * HOUR, reason: 'callback asked', callback: asked });
    await h.db.updateTable('leads').set({ state: 'calling' }).where('id', '=', asker).execute();
    const second = await call(asker, ASKER, NOW + 24 * HOUR);
    await end(second, { kind: 'complete' });
    // REFUSED: asks for a time that cannot be read; the retry settings decide.
    const refusedLead = await lead(REFUSED);
    const only = await call(refusedLead, REFUSED, NOW);
    const refused: CallbackNote = { asked: 'when the cows come home', zone: 'UTC', askedAt: null, dueAt: null, movedReason: null, refusedReason: 'no date or time could be read from it', extracted: {} };
    await end(only, { kind: 'complete', callback: refused });
  });
  afterEach(async () => {
    await h.close();
  });

  async function lead(phone: string): Promise<number> {
    const r = await h.db
      .insertInto('leads')
      .values({ campaign_id: campaignId, dedupe_key: phone, phone_number: phone, variables_json: '{}', timezone: null, state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: 'x.csv', source_line: 2, created_at: NOW, updated_at: NOW })
      .returning('id')
      .executeTakeFirstOrThrow();
    return r.id;
  }

  async function call(leadId: number, phone: string, at: number): Promise<AttemptRow> {
    return h.db
      .insertInto('attempts')
      .values({ campaign_id: campaignId, lead_id: leadId, contact_position: 0, phone_number: phone, assistant_id: 1, state: 'ended', call_id: String(at), call_status: 'completed', answered_by: 'human', outcome: 'success', detail: null, outcome_source: 'poll', created_at: at, sent_at: at, answered_at: null, ended_at: at + 60_000, settle_deadline: null, owner: null, fence_token: null, fence_account: null })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  const end = (attempt: AttemptRow, decision: LeadDecision) => h.db.transaction().execute((trx) => leadAfterOutcome(trx, attempt, () => decision, Number(attempt.ended_at)));

  async function exported(format: 'csv' | 'jsonl'): Promise<string> {
    let text = '';
    await exportResults(h.db, { format, scope: { campaignIds: [campaignId] }, campaignNames: new Map([[campaignId, 'main']]), bom: false }, async (t) => void (text += t));
    return text;
  }

  it('JSONL: every call in attempt_history with what it asked and whether it was a callback call; the line with the last call', async () => {
    const lines = (await exported('jsonl')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const byPhone = new Map(lines.map((l) => [l.phone_number as string, l]));
    const pick = (a: Record<string, unknown>) => ({ callback_asked: a.callback_asked, callback_state: a.callback_state, callback_scheduled_at: a.callback_scheduled_at, callback_refused_reason: a.callback_refused_reason, callback_call: a.callback_call });
    expect(byPhone.get(ASKER)!.attempt_history.map(pick)).toEqual([
      { callback_asked: 'tomorrow at 7 am', callback_state: 'placed', callback_scheduled_at: new Date(NOW + 24 * HOUR).toISOString(), callback_refused_reason: null, callback_call: false },
      { callback_asked: null, callback_state: null, callback_scheduled_at: null, callback_refused_reason: null, callback_call: true },
    ]);
    expect(pick(byPhone.get(ASKER)!)).toEqual({ callback_asked: null, callback_state: null, callback_scheduled_at: null, callback_refused_reason: null, callback_call: true });
    expect(byPhone.get(REFUSED)!.attempt_history.map(pick)).toEqual([
      { callback_asked: 'when the cows come home', callback_state: 'refused', callback_scheduled_at: null, callback_refused_reason: 'no date or time could be read from it', callback_call: false },
    ]);
  });

  it('CSV: the callback columns after variant, from the last call', async () => {
    const rows = parse(await exported('csv'), { columns: true }) as Record<string, string>[];
    const header = Object.keys(rows[0]!);
    expect(header.slice(header.indexOf('variant'), header.indexOf('variant') + 6)).toEqual(['variant', 'callback_asked', 'callback_state', 'callback_scheduled_at', 'callback_refused_reason', 'callback_call']);
    const byPhone = new Map(rows.map((r) => [r.phone_number!, r]));
    expect(byPhone.get(ASKER)).toMatchObject({ callback_asked: '', callback_state: '', callback_scheduled_at: '', callback_call: 'true' });
    expect(byPhone.get(REFUSED)).toMatchObject({ callback_asked: 'when the cows come home', callback_state: 'refused', callback_scheduled_at: '', callback_refused_reason: 'no date or time could be read from it', callback_call: 'false' });
  });

  const callbackRows = () => h.db.selectFrom('callbacks').select(['lead_id', 'state', 'asked', 'extracted_json', 'dropped_reason']).orderBy('id').execute();

  it('forget erases the words, the extracted variables and the dropped reason of the number\'s callbacks; the rows stay', async () => {
    // A third lead of the number waits for its callback: forget stops it (the callback is dropped) and erases that too.
    const waiting = await lead('+12025550403');
    const asked: CallbackNote = { asked: 'morgen um 15 Uhr', zone: 'UTC', askedAt: NOW + 30 * HOUR, dueAt: NOW + 30 * HOUR, movedReason: null, refusedReason: null, extracted: { callback_at: 'morgen um 15 Uhr' } };
    await end(await call(waiting, '+12025550403', NOW), { kind: 'callback', nextDueAt: NOW + 30 * HOUR, reason: 'callback asked: "morgen um 15 Uhr" (UTC)', callback: asked });
    await forgetNumber(h.db, ASKER, { now: NOW + 48 * HOUR, keepCalling: false });
    await forgetNumber(h.db, '+12025550403', { now: NOW + 48 * HOUR, keepCalling: false });
    const rows = await callbackRows();
    expect(rows.map((r) => ({ state: r.state, asked: r.asked, extracted_json: r.extracted_json, dropped_reason: r.dropped_reason }))).toEqual([
      { state: 'placed', asked: '', extracted_json: null, dropped_reason: null },
      { state: 'refused', asked: 'when the cows come home', extracted_json: null, dropped_reason: null },
      { state: 'dropped', asked: '', extracted_json: null, dropped_reason: null },
    ]);
    expect(await exported('jsonl')).not.toContain('morgen');
  });

  it('retention erases the words of callbacks asked before the cutoff that no longer wait; a waiting one keeps them for its call', async () => {
    const waiting = await lead('+12025550403');
    const asked: CallbackNote = { asked: 'in 3 days', zone: 'UTC', askedAt: NOW + 72 * HOUR, dueAt: NOW + 72 * HOUR, movedReason: null, refusedReason: null, extracted: { callback_at: 'in 3 days' } };
    await end(await call(waiting, '+12025550403', NOW), { kind: 'callback', nextDueAt: NOW + 72 * HOUR, reason: 'callback asked', callback: asked });
    await eraseBefore(h.db, NOW + 48 * HOUR, NOW + 48 * HOUR);
    expect((await callbackRows()).map((r) => ({ state: r.state, asked: r.asked, extracted_json: r.extracted_json }))).toEqual([
      { state: 'placed', asked: '', extracted_json: null },
      { state: 'refused', asked: '', extracted_json: null },
      { state: 'scheduled', asked: 'in 3 days', extracted_json: JSON.stringify({ callback_at: 'in 3 days' }) },
    ]);
  });
});

// Callbacks the person asks for (README, "Callbacks the person asks for"): a scheduled
// callback whose lead then ends otherwise (cancelled, suppressed, made invalid…) is
// `dropped` with the lead's final state and reason, in the transaction that ended the lead,
// whatever store code wrote that state; status counts it neither scheduled nor placed. A
// scheduled callback is announced to hooks as `lead.callback_scheduled` in the transaction
// that recorded it. On both databases, through the store's own writers.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { explainNumber } from '../../src/explain/explain.js';
import { collectStatus } from '../../src/status/collect.js';
import { renderStatus } from '../../src/status/render.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { CallbackNote } from '../../src/store/callbacks.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { suppressLead } from '../../src/store/due-leads.js';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { cancelLead } from '../../src/store/lead-cancel.js';
import { leadAfterOutcome, leadBackUncounted, leadCancelledUncounted, leadContactInvalid } from '../../src/store/lead-transitions.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { addSuppressions, suppressLeadsOfNumbers, suppressPendingLeads } from '../../src/store/suppressions.js';
import type { AttemptRow } from '../../src/store/types.js';
import { systemClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { openTestStore } from '../helpers/test-store.js';

const NOW = 1_800_000_000_000;
const HOUR = 3_600_000;
const CALLBACKS = { variable: 'callback_at', maxPerLead: 2, horizonDays: 30 };

describe('a scheduled callback whose lead ends otherwise', () => {
  let h: DatabaseHandle;
  let campaignId: number;
  let other: number;
  beforeEach(async () => {
    h = await openTestStore();
    await migrateToLatest(h.db, { clock: systemClock });
    campaignId = (await upsertCampaign(h.db, testCampaignConfig('main', { callbacks: CALLBACKS }), { timezone: 'UTC' }, NOW)).id;
    other = (await upsertCampaign(h.db, testCampaignConfig('other'), { timezone: 'UTC' }, NOW)).id;
    await syncHookSubscriptions(h.db, [{ url: 'http://127.0.0.1:9/hook', events: ['lead.callback_scheduled'] }]);
  });
  afterEach(async () => {
    await h.close();
  });

  /** A lead of `campaign` in a call on `phone`, with that call's attempt. */
  async function leadInCall(phone: string, campaign = campaignId): Promise<AttemptRow> {
    const lead = await h.db
      .insertInto('leads')
      .values({ campaign_id: campaign, dedupe_key: phone, phone_number: phone, variables_json: '{}', timezone: null, state: 'calling', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: 'x.csv', source_line: 2, created_at: NOW, updated_at: NOW })
      .returning('id')
      .executeTakeFirstOrThrow();
    return callOf(lead.id, phone, campaign);
  }

  async function callOf(leadId: number, phone: string, campaign = campaignId): Promise<AttemptRow> {
    return h.db
      .insertInto('attempts')
      .values({ campaign_id: campaign, lead_id: leadId, contact_position: 0, phone_number: phone, assistant_id: 1, state: 'ended', call_id: null, call_status: 'completed', answered_by: 'human', outcome: 'success', detail: null, outcome_source: null, created_at: NOW, sent_at: NOW, answered_at: null, ended_at: NOW + 60_000, settle_deadline: null, owner: null, fence_token: null, fence_account: null })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A lead whose call asked to be called back in two hours: retry-scheduled with its callback scheduled. */
  async function scheduled(phone: string): Promise<number> {
    const attempt = await leadInCall(phone);
    const note: CallbackNote = { asked: 'in 2 hours', zone: 'UTC', askedAt: NOW + 2 * HOUR, dueAt: NOW + 2 * HOUR, movedReason: null, refusedReason: null, extracted: { callback_at: 'in 2 hours' } };
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, attempt, () => ({ kind: 'callback', nextDueAt: NOW + 2 * HOUR, reason: 'callback asked', callback: note }), NOW + 60_000));
    return Number(attempt.lead_id);
  }

  const callback = async (leadId: number) => h.db.selectFrom('callbacks').select(['state', 'dropped_reason']).where('lead_id', '=', leadId).executeTakeFirstOrThrow();
  /** The lead claimed again for its callback call (as the dial loop's claim does). */
  const claim = async (leadId: number) => {
    await h.db.updateTable('leads').set({ state: 'calling' }).where('id', '=', leadId).execute();
    const lead = await h.db.selectFrom('leads').select('phone_number').where('id', '=', leadId).executeTakeFirstOrThrow();
    return callOf(leadId, lead.phone_number);
  };

  it('is dropped when the lead is cancelled (the API), suppressed (a number added, the list applied, the dial-time check), refused by the pre-dial check, or made invalid; status and explain say so', async () => {
    const cancelled = await scheduled('+12025550401');
    const byNumber = await scheduled('+12025550402');
    const byList = await scheduled('+12025550403');
    const atDial = await scheduled('+12025550404');
    const predial = await scheduled('+12025550405');
    const invalid = await scheduled('+12025550406');
    const kept = await scheduled('+12025550407');
    expect((await collectStatus(h.db, { now: NOW, version: 'test', isPidAlive: () => true })).campaigns.find((c) => c.name === 'main')!.callbacks).toEqual({ scheduled: 7, placed: 0, refused: 0, dropped: 0 });

    await cancelLead(h.db, cancelled, { now: NOW + HOUR, reason: 'cancelled through the API' });
    await suppressLeadsOfNumbers(h.db, ['+12025550402'], NOW + HOUR);
    await addSuppressions(h.db, ['+12025550403'], 'cli', NOW + HOUR);
    await suppressPendingLeads(h.db, NOW + HOUR);
    await suppressLead(h.db, atDial, NOW + HOUR);
    const predialCall = await claim(predial);
    await h.db.transaction().execute((trx) => leadCancelledUncounted(trx, predialCall, 'pre-dial check: do not call', NOW + HOUR));
    const invalidCall = await claim(invalid);
    await h.db.transaction().execute((trx) => leadContactInvalid(trx, invalidCall, 'the service refused the number', NOW + HOUR));
    // Claimed and put back uncounted (a 429): still its callback, still scheduled.
    const keptCall = await claim(kept);
    await h.db.transaction().execute((trx) => leadBackUncounted(trx, keptCall, NOW + 2 * HOUR, 'rate limited', NOW + HOUR));

    expect(await callback(cancelled)).toEqual({ state: 'dropped', dropped_reason: 'lead cancelled: cancelled through the API' });
    expect(await callback(byNumber)).toEqual({ state: 'dropped', dropped_reason: 'lead suppressed: on the suppression list' });
    expect(await callback(byList)).toEqual({ state: 'dropped', dropped_reason: 'lead suppressed: on the suppression list' });
    expect(await callback(atDial)).toEqual({ state: 'dropped', dropped_reason: 'lead suppressed: on the suppression list' });
    expect(await callback(predial)).toEqual({ state: 'dropped', dropped_reason: 'lead cancelled: pre-dial check: do not call' });
    expect(await callback(invalid)).toEqual({ state: 'dropped', dropped_reason: 'lead invalid: the service refused the number' });
    expect(await callback(kept)).toEqual({ state: 'scheduled', dropped_reason: null });
    const report = await collectStatus(h.db, { now: NOW + HOUR, version: 'test', isPidAlive: () => true });
    expect(report.campaigns.find((c) => c.name === 'main')!.callbacks).toEqual({ scheduled: 1, placed: 0, refused: 0, dropped: 6 });
    expect(renderStatus(report, { now: NOW + HOUR, color: false })).toContain('main: callbacks 1 scheduled · 0 placed · 0 refused · 6 dropped');
    const explained = await explainNumber(h.db, '+12025550401', NOW + HOUR, () => true);
    expect(explained.leads[0]!.callbacks).toMatchObject([{ state: 'dropped', dropped_reason: 'lead cancelled: cancelled through the API' }]);
  });

  it("is dropped when an on_result rule of another campaign suppresses its number, in that rule's transaction", async () => {
    const leadId = await scheduled('+12025550411');
    const elsewhere = await leadInCall('+12025550411', other);
    await expect(
      h.db.transaction().execute(async (trx) => {
        await leadAfterOutcome(trx, elsewhere, () => ({ kind: 'suppress', reason: 'suppressed by on_result rule 1', phone: '+12025550411', campaign: 'other' }), NOW + HOUR);
        expect((await trx.selectFrom('callbacks').select('state').where('lead_id', '=', leadId).executeTakeFirstOrThrow()).state).toBe('dropped');
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    // Rolled back with the suppression: the lead and its callback are as they were.
    expect(await callback(leadId)).toEqual({ state: 'scheduled', dropped_reason: null });
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, elsewhere, () => ({ kind: 'suppress', reason: 'suppressed by on_result rule 1', phone: '+12025550411', campaign: 'other' }), NOW + HOUR));
    expect(await callback(leadId)).toEqual({ state: 'dropped', dropped_reason: 'lead suppressed: on the suppression list' });
  });

  it('is placed, not dropped, when its own call ends the lead', async () => {
    const completed = await scheduled('+12025550421');
    const completedCall = await claim(completed);
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, completedCall, () => ({ kind: 'complete' }), NOW + 3 * HOUR));
    expect(await callback(completed)).toEqual({ state: 'placed', dropped_reason: null });
  });

  it('is announced to hooks as lead.callback_scheduled, once, in the transaction that scheduled it; a refused one is not', async () => {
    const leadId = await scheduled('+12025550431');
    const refusedCall = await leadInCall('+12025550432');
    const refused: CallbackNote = { asked: 'never', zone: 'UTC', askedAt: null, dueAt: null, movedReason: null, refusedReason: 'no date or time could be read from it', extracted: {} };
    await h.db.transaction().execute((trx) => leadAfterOutcome(trx, refusedCall, () => ({ kind: 'complete', callback: refused }), NOW + 60_000));
    const events = await h.db.selectFrom('hook_outbox').select(['type', 'lead_id', 'campaign_id', 'body']).execute();
    expect(events.map((e) => ({ type: e.type, lead_id: Number(e.lead_id), campaign_id: Number(e.campaign_id) }))).toEqual([{ type: 'lead.callback_scheduled', lead_id: leadId, campaign_id: campaignId }]);
    const body = JSON.parse(events[0]!.body!);
    expect(body).toMatchObject({
      type: 'lead.callback_scheduled',
      data: {
        campaign: { name: 'main' },
        lead: { id: leadId, phone_number: '+12025550431', state: 'retry-scheduled' },
        callback: { asked: 'in 2 hours', zone: 'UTC', asked_at: new Date(NOW + 2 * HOUR).toISOString(), scheduled_at: new Date(NOW + 2 * HOUR).toISOString(), moved_reason: null },
        attempt: { state: 'ended', phone_number: '+12025550431' },
      },
    });
  });
});

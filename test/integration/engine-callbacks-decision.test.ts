// Callbacks the person asks for (README, "Callbacks the person asks for"): what one call's
// asked words become, in the person's zone, against the campaign's window and rules, with
// the bounds of callbacks (horizon_days, max_per_lead) and the precedence of on_result.
// The real campaign view (runtimeCampaign: the same zone resolution and window code the dial
// loop uses) judges each case; the stack test covers the same decision end to end.
import { describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { callbackNote } from '../../src/engine/callback-decision.js';
import { leadDecider } from '../../src/engine/lead-decider.js';
import { runtimeCampaign } from '../../src/engine/runtime-campaign.js';
import type { CampaignRow } from '../../src/store/types.js';
import type { LeadWithContacts } from '../../src/store/lead-transitions.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

const CALLBACKS = { variable: 'callback_at', maxPerLead: 2, horizonDays: 30 };
const GERMAN = '+4930901820';
const US_EAST = '+12025550401';

function campaign(overrides: Partial<CampaignConfig> = {}) {
  const config = testCampaignConfig('cb', { callbacks: CALLBACKS, ...overrides });
  const row: CampaignRow = {
    id: 1, name: 'cb', state: 'running', assistant_id: 1, timezone: config.timezone ?? 'UTC', max_calls_in_parallel: 3, remote_campaign_id: null,
    config_json: JSON.stringify(config), config_file: null, problem: null, created_at: 0, updated_at: 0, completed_at: null,
  };
  return runtimeCampaign(row);
}

const lead = (over: Partial<LeadWithContacts> = {}) => ({ callbacks_given: 0, timezone: null, ...over });

describe('a callback asked in a call', () => {
  it('is read in the zone of the number, and on a daylight-saving day lands at the wall-clock hour asked', () => {
    // Saturday 28 March 2026, 18:00 in Berlin (CET); Sunday the clocks go to CEST.
    const ended = Date.UTC(2026, 2, 28, 17, 0);
    const note = callbackNote(CALLBACKS, { callback_at: 'morgen um 15 Uhr' }, campaign(), lead(), GERMAN, ended)!;
    expect(note).toMatchObject({ asked: 'morgen um 15 Uhr', zone: 'Europe/Berlin', refusedReason: null, movedReason: null });
    // 15:00 CEST is 13:00 UTC (a day earlier it would have been 14:00 UTC).
    expect(note.askedAt).toBe(Date.UTC(2026, 2, 29, 13, 0));
    expect(note.dueAt).toBe(note.askedAt);
  });

  it("takes the lead's zone column over the number's", () => {
    const ended = Date.UTC(2026, 0, 5, 12, 0);
    const note = callbackNote(CALLBACKS, { callback_at: 'tomorrow at 3 pm' }, campaign(), lead({ timezone: 'Asia/Tokyo' }), US_EAST, ended)!;
    expect(note.zone).toBe('Asia/Tokyo');
    expect(note.askedAt).toBe(Date.UTC(2026, 0, 6, 6, 0));
  });

  it("outside the campaign window moves to the window's opening, and says why", () => {
    const c = campaign({ timezone: 'Europe/Berlin', allowedHoursStart: 9 * 3600, allowedHoursEnd: 17 * 3600 });
    const ended = Date.UTC(2026, 0, 5, 12, 0); // Monday 13:00 in Berlin
    const note = callbackNote(CALLBACKS, { callback_at: 'tomorrow at 7 am' }, c, lead(), GERMAN, ended)!;
    expect(note.askedAt).toBe(Date.UTC(2026, 0, 6, 6, 0)); // 07:00 CET
    expect(note.dueAt).toBe(Date.UTC(2026, 0, 6, 8, 0)); // 09:00 CET, the window's opening
    expect(note.movedReason).toBe('outside the campaign window');
  });

  it("outside the person's own hours moves to their opening", () => {
    const c = campaign({ leadLocalHours: { start: 9 * 3600, end: 20 * 3600 } });
    const ended = Date.UTC(2026, 0, 5, 12, 0);
    const note = callbackNote(CALLBACKS, { callback_at: 'tomorrow at 22:00' }, c, lead(), US_EAST, ended)!;
    expect(note.zone).toBe('America/New_York');
    expect(note.askedAt).toBe(Date.UTC(2026, 0, 7, 3, 0));
    expect(note.dueAt).toBe(Date.UTC(2026, 0, 7, 14, 0)); // 09:00 EST the next morning
    expect(note.movedReason).toMatch(/^outside the person's hours: lead_local_hours in America\/New_York/);
  });

  it('beyond horizon_days, unreadable, or over max_per_lead: recorded as refused, not scheduled', () => {
    const ended = Date.UTC(2026, 0, 5, 12, 0);
    const c = campaign();
    expect(callbackNote(CALLBACKS, { callback_at: 'in 40 days' }, c, lead(), US_EAST, ended)).toMatchObject({ dueAt: null, refusedReason: 'the time is more than 30 days ahead' });
    expect(callbackNote(CALLBACKS, { callback_at: 'when the cows come home' }, c, lead(), US_EAST, ended)).toMatchObject({ dueAt: null, refusedReason: 'no date or time could be read from it' });
    expect(callbackNote(CALLBACKS, { callback_at: 'in 2 hours' }, c, lead({ callbacks_given: 2 }), US_EAST, ended)).toMatchObject({ dueAt: null, refusedReason: 'max_per_lead reached (2)', askedAt: ended + 7_200_000 });
    expect(callbackNote(CALLBACKS, { other: 'x' }, c, lead(), US_EAST, ended)).toBeNull();
    expect(callbackNote(CALLBACKS, { callback_at: '  ' }, c, lead(), US_EAST, ended)).toBeNull();
  });

  it('an on_result rule that matches wins, and the callback is recorded as refused; without one the callback decides, without it the retry settings', () => {
    const ended = Date.UTC(2026, 0, 5, 12, 0);
    const onResult = [{ position: 1, variable: { name: 'reason', equals: 'stop' }, then: { kind: 'suppress' as const } }];
    const c = campaign({ onResult });
    const row = { ...lead(), contact_position: 0, contact_count: 1, contact_attempts: 1 } as LeadWithContacts;
    const facts = (variables: Record<string, unknown>) => ({ status: 'completed', answeredBy: 'human', variables });
    const byRule = leadDecider('success', c, { phone_number: US_EAST }, facts({ reason: 'stop', callback_at: 'in 2 hours' }), ended)(row);
    expect(byRule.kind).toBe('suppress');
    expect(byRule.callback).toMatchObject({ dueAt: null, refusedReason: 'suppressed by on_result rule 1 (reason = "stop") decided instead' });
    const cb = leadDecider('success', c, { phone_number: US_EAST }, facts({ callback_at: 'in 2 hours' }), ended)(row);
    expect(cb).toMatchObject({ kind: 'callback', nextDueAt: ended + 7_200_000, reason: 'callback asked: "in 2 hours" (America/New_York)' });
    const refused = leadDecider('success', c, { phone_number: US_EAST }, facts({ callback_at: 'yesterday' }), ended)(row);
    expect(refused).toMatchObject({ kind: 'complete', callback: { refusedReason: 'the time is in the past' } });
  });
});

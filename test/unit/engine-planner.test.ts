// The planner (src/engine/planner.ts): which campaigns take calls and how many, which due
// lead takes a slot, and when the scheduler and the call list are looked at again. Pure,
// so it is driven here with made-up campaigns and counts, no store and no clock.
import { describe, expect, it } from 'vitest';
import type { RuntimeCampaign } from '../../src/engine/runtime-campaign.js';
import {
  afterFailedRounds,
  backstopPollAt,
  confirmationDueAt,
  dialingAllowed,
  DUE_FLOOR_MS,
  gateLookAt,
  gateVerdict,
  nextPassAt,
  planCampaigns,
  planLead,
  SlotPlan,
  type LeadContext,
  type LeadFacts,
  webhooksHealthy,
} from '../../src/engine/planner.js';
import type { CapHold } from '../../src/engine/caps.js';
import type { PersonWindow } from '../../src/rules/person-window.js';
import type { WindowSpec } from '../../src/time/window.js';

const S = 1_000;
const H = 3_600_000;
/** Wednesday 25 November 2026, 10:00 UTC: inside a 09:00–17:00 weekday window. */
const WED_10 = Date.UTC(2026, 10, 25, 10);
const WEEKDAYS: WindowSpec = { timezone: 'UTC', days: [1, 2, 3, 4, 5], start: 9 * 3600, end: 17 * 3600, blackoutDates: [] };

/** A person inside their hours, and one outside them until an hour from WED_10. */
const OPEN_PERSON: LeadFacts['person'] = { closedBy: () => null, nextOpening: (from) => from };
const CLOSED_PERSON: LeadFacts['person'] = {
  closedBy: () => ({ label: 'lead_local_hours in UTC' }) as ReturnType<PersonWindow['closedBy']>,
  nextOpening: () => WED_10 + H,
};
const CAP: CapHold = { cap: { count: 1, windowHours: 24, origin: 'daemon max_attempts_per_number' }, count: 1, until: WED_10 + 2 * H };

/** The fields of a runtime campaign the planner reads. */
function campaign(id: number, over: Partial<Pick<RuntimeCampaign, 'state' | 'problem' | 'window'>> & { max?: number } = {}): RuntimeCampaign {
  return {
    id,
    name: `c${id}`,
    state: over.state ?? 'running',
    problem: over.problem ?? null,
    window: over.window ?? WEEKDAYS,
    config: { maxCallsInParallel: over.max ?? 5 },
  } as unknown as RuntimeCampaign;
}

describe('dial gate', () => {
  const open = { stopping: false, tokenRejected: false, accountPausedUntil: 0 };
  it('names what stops dialing, first the stop, then the lease, the token and the account pause', () => {
    expect(gateVerdict(open, WED_10)).toBe('open');
    expect(gateVerdict({ ...open, stopping: true, tokenRejected: true }, WED_10)).toBe('stopping');
    expect(gateVerdict({ ...open, leaseLost: true, tokenRejected: true }, WED_10)).toBe('lease-lost');
    expect(gateVerdict({ ...open, tokenRejected: true, accountPausedUntil: WED_10 + 1 }, WED_10)).toBe('token-rejected');
    expect(gateVerdict({ ...open, accountPausedUntil: WED_10 + 1 }, WED_10)).toBe('account-paused');
  });
  it('allows dialing unless stopping, the token is rejected or the account is paused', () => {
    expect(dialingAllowed(open, WED_10)).toBe(true);
    expect(dialingAllowed({ ...open, stopping: true }, WED_10)).toBe(false);
    expect(dialingAllowed({ ...open, tokenRejected: true }, WED_10)).toBe(false);
    expect(dialingAllowed({ ...open, accountPausedUntil: WED_10 + 1 }, WED_10)).toBe(false);
    expect(dialingAllowed({ ...open, accountPausedUntil: WED_10 }, WED_10)).toBe(true);
  });
  it('looks again when the account pause ends, or after the longest sleep', () => {
    expect(gateLookAt({ ...open, accountPausedUntil: WED_10 + 5 * S }, WED_10, 30 * S)).toBe(WED_10 + 5 * S);
    expect(gateLookAt({ ...open, accountPausedUntil: WED_10 + 60 * S }, WED_10, 30 * S)).toBe(WED_10 + 30 * S);
    expect(gateLookAt({ ...open, tokenRejected: true }, WED_10, 30 * S)).toBe(WED_10 + 30 * S);
  });
});

describe('planCampaigns', () => {
  it('fills running campaigns with an open window, up to their own limit less their live calls', () => {
    const plan = planCampaigns([campaign(1, { max: 5 }), campaign(2, { max: 3 })], new Map([[1, 2]]), WED_10);
    expect(plan.steps.map((s) => (s.kind === 'fill' ? [s.campaign.id, s.live, s.free] : s.kind))).toEqual([
      [1, 2, 3],
      [2, 0, 3],
    ]);
    expect(plan.nextOpening).toBeNull();
  });
  it('skips paused, stopped and troubled campaigns, and only checks a completed one for new leads', () => {
    const plan = planCampaigns(
      [campaign(1, { state: 'paused' }), campaign(2, { state: 'stopped' }), campaign(3, { problem: 'assistant not found' }), campaign(4, { state: 'completed' })],
      new Map(),
      WED_10,
    );
    expect(plan.steps.map((s) => [s.kind, s.campaign.id])).toEqual([['check-reopen', 4]]);
  });
  it('gives no slots outside the window, and says when the earliest window opens', () => {
    const evening = Date.UTC(2026, 10, 25, 18);
    const late: WindowSpec = { ...WEEKDAYS, start: 11 * 3600 };
    const plan = planCampaigns([campaign(1), campaign(2, { window: late })], new Map(), evening);
    expect(plan.steps).toEqual([]);
    expect(plan.nextOpening).toBe(Date.UTC(2026, 10, 26, 9));
  });
});

describe('SlotPlan', () => {
  const fill = (c: RuntimeCampaign, live: number, free: number) => ({ kind: 'fill' as const, campaign: c, live, free });
  /** A due lead whose person is inside their hours, with no cap holding the number. */
  const lead = (phone: string, over: Partial<LeadFacts> = {}): LeadFacts => ({ state: 'pending', nextDueAt: WED_10, phone, suppressed: false, person: OPEN_PERSON, cap: null, ...over });

  it('takes a slot and the number for each lead dialled, and refuses the same number twice in a pass (rule 3)', () => {
    const slots = new SlotPlan(undefined, new Map());
    expect(slots.begin(fill(campaign(1), 0, 2))).toBe(2);
    expect(slots.judge(lead('+15550001'), WED_10).kind).toBe('dial');
    expect(slots.free).toBe(1);
    expect(slots.judge(lead('+15550001'), WED_10).kind).toBe('number-busy');
    expect(slots.free).toBe(1);
    // The number stays taken in the next campaign's turn.
    slots.begin(fill(campaign(2), 0, 3));
    expect(slots.judge(lead('+15550001'), WED_10).kind).toBe('number-busy');
  });
  it('applies the rules in order: the suppression list, then the person’s hours, then caps, then rule 3', () => {
    const slots = new SlotPlan(undefined, new Map());
    slots.begin(fill(campaign(1), 0, 3));
    expect(slots.judge(lead('+15550002', { suppressed: true, person: CLOSED_PERSON, cap: CAP }), WED_10).kind).toBe('suppressed');
    expect(slots.judge(lead('+15550002', { person: CLOSED_PERSON, cap: CAP }), WED_10)).toEqual({ kind: 'person-hours', label: 'lead_local_hours in UTC', opening: WED_10 + H });
    expect(slots.judge(lead('+15550002', { cap: CAP }), WED_10)).toEqual({ kind: 'attempt-cap', hold: CAP });
    // None took the slot or the number.
    expect(slots.free).toBe(3);
    expect(slots.judge(lead('+15550002'), WED_10).kind).toBe('dial');
  });
  it('bounds every campaign by the account limit over all of them, counting the calls picked in this pass', () => {
    const slots = new SlotPlan(4, new Map([[1, 1], [2, 1]]));
    expect(slots.begin(fill(campaign(1), 1, 4))).toBe(2);
    slots.judge(lead('+15550003'), WED_10);
    expect(slots.begin(fill(campaign(2), 1, 4))).toBe(1);
    slots.judge(lead('+15550004'), WED_10);
    expect(slots.begin(fill(campaign(3), 0, 4))).toBe(0);
  });
});

describe('planLead: the one order of the rules for a lead', () => {
  const facts = (over: Partial<LeadFacts> = {}): LeadFacts => ({ state: 'pending', nextDueAt: WED_10 - H, phone: '+15550009', suppressed: false, person: OPEN_PERSON, cap: null, ...over });
  const ctx = (over: Partial<LeadContext> = {}): LeadContext => ({ now: WED_10, campaign: campaign(1), gate: 'open', phoneBusy: false, campaignLive: 0, campaignMax: 5, daemonLive: 0, daemonMax: null, ...over });

  it('dials a due lead with every check passed', () => {
    expect(planLead(facts(), ctx())).toEqual({ kind: 'dial' });
  });
  it('names the campaign limit before the daemon-wide one, and the daemon-wide one when only it is full', () => {
    expect(planLead(facts(), ctx({ campaignLive: 5, daemonLive: 5, daemonMax: 5 }))).toMatchObject({ kind: 'campaign-at-limit', live: 5, max: 5 });
    expect(planLead(facts(), ctx({ campaignLive: 1, daemonLive: 20, daemonMax: 20 }))).toMatchObject({ kind: 'daemon-at-limit', live: 20, max: 20 });
    expect(planLead(facts(), ctx({ campaignLive: 1, daemonLive: 19, daemonMax: 20 }))).toEqual({ kind: 'dial' });
  });
  it('puts the lead’s state, the campaign, the list, the due time, the window, the hours, the caps, the gate and the number before the limits', () => {
    const full = { campaignLive: 5, daemonLive: 20, daemonMax: 20 };
    expect(planLead(facts({ state: 'completed' }), ctx(full))).toEqual({ kind: 'final', state: 'completed' });
    expect(planLead(facts({ state: 'calling' }), ctx(full))).toEqual({ kind: 'calling' });
    expect(planLead(facts({ suppressed: true }), ctx({ ...full, campaign: campaign(1, { problem: 'assistant not found' }) }))).toEqual({ kind: 'campaign-problem', problem: 'assistant not found' });
    expect(planLead(facts({ suppressed: true }), ctx({ ...full, campaign: campaign(1, { state: 'paused' }) }))).toEqual({ kind: 'campaign-not-running', state: 'paused' });
    expect(planLead(facts({ suppressed: true, nextDueAt: WED_10 + H }), ctx(full))).toEqual({ kind: 'suppressed' });
    const evening = Date.UTC(2026, 10, 25, 18);
    expect(planLead(facts({ nextDueAt: evening + H }), ctx({ ...full, now: evening }))).toEqual({ kind: 'not-due', at: evening + H });
    expect(planLead(facts({ person: CLOSED_PERSON }), ctx({ ...full, now: evening }))).toEqual({ kind: 'window-closed', opening: Date.UTC(2026, 10, 26, 9) });
    expect(planLead(facts({ person: CLOSED_PERSON, cap: CAP }), ctx({ ...full, gate: 'daemon-down' })).kind).toBe('person-hours');
    expect(planLead(facts({ cap: CAP }), ctx({ ...full, gate: 'daemon-down' })).kind).toBe('attempt-cap');
    expect(planLead(facts(), ctx({ ...full, gate: 'daemon-down', phoneBusy: true }))).toEqual({ kind: 'gate', gate: 'daemon-down' });
    expect(planLead(facts(), ctx({ ...full, phoneBusy: true }))).toEqual({ kind: 'number-busy' });
  });
});

describe('nextPassAt', () => {
  const base = { now: WED_10, maxSleepMs: 30 * S, nextOpening: null, nextDue: [], claimRefused: false };
  it('sleeps at most maxSleep, so suspend and clock jumps heal', () => {
    expect(nextPassAt(base)).toBe(WED_10 + 30 * S);
  });
  it('wakes for the earliest window opening or due lead', () => {
    expect(nextPassAt({ ...base, nextOpening: WED_10 + 10 * S, nextDue: [WED_10 + 20 * S, null] })).toBe(WED_10 + 10 * S);
    expect(nextPassAt({ ...base, nextOpening: WED_10 + 10 * S, nextDue: [WED_10 + 5 * S] })).toBe(WED_10 + 5 * S);
  });
  it('looks at a lead due already only after a short floor, so a refused lead cannot spin the loop', () => {
    expect(nextPassAt({ ...base, nextDue: [WED_10 - H] })).toBe(WED_10 + DUE_FLOOR_MS);
  });
  it('looks again at once when a claim was refused: its slot is still free', () => {
    expect(nextPassAt({ ...base, nextOpening: WED_10 + S, claimRefused: true })).toBe(WED_10);
    // A campaign reopened by this pass has its leads judged by the next one, at once.
    expect(nextPassAt({ ...base, nextOpening: WED_10 + S, reopened: true })).toBe(WED_10);
  });
});

describe('call-list timing', () => {
  const t = { lastPollAt: WED_10, minGapMs: S, batch: 100, waitMs: 300 * S };
  it('lists webhook successes once a page waits, or once the oldest waited long enough', () => {
    expect(confirmationDueAt({ count: 0, oldestEndedAt: null }, t)).toBe(Number.POSITIVE_INFINITY);
    expect(confirmationDueAt({ count: 100, oldestEndedAt: WED_10 }, t)).toBe(WED_10 + S);
    expect(confirmationDueAt({ count: 3, oldestEndedAt: WED_10 - 10 * S }, t)).toBe(WED_10 + 290 * S);
    expect(confirmationDueAt({ count: 3, oldestEndedAt: WED_10 - H }, t)).toBe(WED_10 + S);
  });
  it('with webhooks arriving, lists as a backstop, sooner for an overdue call, and not again at once after missing its end', () => {
    const p = { lastPollAt: WED_10, backstopMs: 300 * S, overdueMs: 240 * S, overdueRetryMs: 120 * S };
    expect(backstopPollAt({ ...p, oldestPlacedAt: null })).toBe(WED_10 + 300 * S);
    expect(backstopPollAt({ ...p, oldestPlacedAt: WED_10 - 60 * S })).toBe(WED_10 + 180 * S);
    expect(backstopPollAt({ ...p, oldestPlacedAt: WED_10 - 600 * S })).toBe(WED_10 + 120 * S);
  });
  it('backs off after failed listings: 5 s, 10 s, 20 s… up to the longest gap', () => {
    const timing = { lastPollAt: WED_10, minGapMs: S, maxGapMs: 60 * S };
    expect(afterFailedRounds(WED_10 + S, 0, timing)).toBe(WED_10 + S);
    expect(afterFailedRounds(WED_10 + S, 1, timing)).toBe(WED_10 + 5 * S);
    expect(afterFailedRounds(WED_10 + S, 3, timing)).toBe(WED_10 + 20 * S);
    expect(afterFailedRounds(WED_10 + S, 10, timing)).toBe(WED_10 + 60 * S);
    expect(afterFailedRounds(WED_10 + 90 * S, 1, timing)).toBe(WED_10 + 90 * S);
  });
  it('counts webhooks as arriving only when enabled and one came recently', () => {
    const p = { enabled: true, lastWebhookAt: WED_10 - 60 * S, now: WED_10, healthyMs: 600 * S };
    expect(webhooksHealthy(p)).toBe(true);
    expect(webhooksHealthy({ ...p, enabled: false })).toBe(false);
    expect(webhooksHealthy({ ...p, lastWebhookAt: Number.NEGATIVE_INFINITY })).toBe(false);
    expect(webhooksHealthy({ ...p, lastWebhookAt: WED_10 - 600 * S })).toBe(false);
  });
});

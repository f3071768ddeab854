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
  nextPassAt,
  planCampaigns,
  SlotPlan,
  webhooksHealthy,
} from '../../src/engine/planner.js';
import type { WindowSpec } from '../../src/time/window.js';

const S = 1_000;
const H = 3_600_000;
/** Wednesday 25 November 2026, 10:00 UTC: inside a 09:00–17:00 weekday window. */
const WED_10 = Date.UTC(2026, 10, 25, 10);
const WEEKDAYS: WindowSpec = { timezone: 'UTC', days: [1, 2, 3, 4, 5], start: 9 * 3600, end: 17 * 3600, blackoutDates: [] };

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

  it('takes a slot and the number for each lead dialled, and refuses the same number twice in a pass (rule 3)', () => {
    const slots = new SlotPlan(undefined, new Map());
    expect(slots.begin(fill(campaign(1), 0, 2))).toBe(2);
    expect(slots.judge('+15550001', { suppressed: false, held: false })).toBe('dial');
    expect(slots.free).toBe(1);
    expect(slots.judge('+15550001', { suppressed: false, held: false })).toBe('phone-busy');
    expect(slots.free).toBe(1);
    // The number stays taken in the next campaign's turn.
    slots.begin(fill(campaign(2), 0, 3));
    expect(slots.judge('+15550001', { suppressed: false, held: false })).toBe('phone-busy');
  });
  it('applies the rules in order: the suppression list, then the person’s hold, then rule 3', () => {
    const slots = new SlotPlan(undefined, new Map());
    slots.begin(fill(campaign(1), 0, 3));
    expect(slots.judge('+15550002', { suppressed: true, held: true })).toBe('suppressed');
    expect(slots.judge('+15550002', { suppressed: false, held: true })).toBe('held');
    // Neither took the slot or the number.
    expect(slots.free).toBe(3);
    expect(slots.judge('+15550002', { suppressed: false, held: false })).toBe('dial');
  });
  it('bounds every campaign by the account limit over all of them, counting the calls picked in this pass', () => {
    const slots = new SlotPlan(4, new Map([[1, 1], [2, 1]]));
    expect(slots.begin(fill(campaign(1), 1, 4))).toBe(2);
    slots.judge('+15550003', { suppressed: false, held: false });
    expect(slots.begin(fill(campaign(2), 1, 4))).toBe(1);
    slots.judge('+15550004', { suppressed: false, held: false });
    expect(slots.begin(fill(campaign(3), 0, 4))).toBe(0);
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

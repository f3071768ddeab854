import { isOpen, nextOpening } from '../time/window.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// What the engine should do next, decided from state already read and the clock's "now":
// which campaigns may take calls and how many, which due lead goes into a slot, and when
// to look again (the scheduler and the call list). Pure: no store, no clock, no timers,
// so each rule is unit-tested without I/O (test/unit/engine-planner.test.ts). The loops
// read, ask here, and write.

/** A lead falling due "now" is looked for at least this much later, so a lead the claim refuses cannot spin the loop. */
export const DUE_FLOOR_MS = 50;

// Dialing

/** What stops all dialing, whatever the campaigns say. */
export interface DialGate {
  stopping: boolean;
  /** Several instances on PostgreSQL: this one's lease is no longer held (product.md §10). */
  leaseLost?: boolean;
  tokenRejected: boolean;
  /** After a 422 for the account, nothing is dialled before this instant. */
  accountPausedUntil: number;
}

export function dialingAllowed(gate: DialGate, now: number): boolean {
  return !gate.stopping && !gate.leaseLost && !gate.tokenRejected && now >= gate.accountPausedUntil;
}

/** When a closed gate is looked at again: the account pause's end if it comes first. */
export function gateLookAt(gate: DialGate, now: number, maxSleepMs: number): number {
  const nextAt = now + maxSleepMs;
  return Math.min(nextAt, gate.accountPausedUntil > now ? gate.accountPausedUntil : nextAt);
}

/** What one pass does with a campaign. Campaigns not running (or with a problem) get no step. */
export type CampaignStep =
  /** Completed: runs again if leads were added (the store says). */
  | { kind: 'check-reopen'; campaign: RuntimeCampaign }
  /** Running with its window open: `free` slots below its own limit. */
  | { kind: 'fill'; campaign: RuntimeCampaign; live: number; free: number };

export interface CampaignPlan {
  steps: CampaignStep[];
  /** The earliest window opening among running campaigns whose window is closed. */
  nextOpening: number | null;
}

/** Which campaigns a pass looks at, in order, and what for. */
export function planCampaigns(campaigns: Iterable<RuntimeCampaign>, live: ReadonlyMap<number, number>, now: number): CampaignPlan {
  const steps: CampaignStep[] = [];
  let opening: number | null = null;
  for (const c of campaigns) {
    if (c.state === 'completed') {
      steps.push({ kind: 'check-reopen', campaign: c });
      continue;
    }
    if (c.state !== 'running' || c.problem) continue;
    if (!isOpen(c.window, now)) {
      const at = nextOpening(c.window, now);
      if (at !== null) opening = opening === null ? at : Math.min(opening, at);
      continue;
    }
    const n = live.get(c.id) ?? 0;
    steps.push({ kind: 'fill', campaign: c, live: n, free: c.config.maxCallsInParallel - n });
  }
  return { steps, nextOpening: opening };
}

/** Why a due lead is not dialled in this pass, or 'dial'. */
export type LeadVerdict = 'suppressed' | 'held' | 'phone-busy' | 'dial';

/**
 * The slots of one pass: each campaign's own limit and the account's (daemon
 * max_calls_in_parallel) over every campaign, and the numbers already picked (rule 3
 * within the pass: one live call per number, whichever campaign holds it).
 */
export class SlotPlan {
  private accountLive: number;
  private readonly phones = new Set<string>();
  private campaignFree = 0;

  constructor(
    private readonly accountMaxCalls: number | undefined,
    live: ReadonlyMap<number, number>,
  ) {
    this.accountLive = [...live.values()].reduce((a, b) => a + b, 0);
  }

  /** Starts a campaign's turn; returns its free slots (≤ 0: a freed slot wakes the loop). */
  begin(step: Extract<CampaignStep, { kind: 'fill' }>): number {
    this.campaignFree = step.free;
    if (this.accountMaxCalls !== undefined) this.campaignFree = Math.min(this.campaignFree, this.accountMaxCalls - this.accountLive);
    return this.campaignFree;
  }

  /** Slots left in the current campaign's turn. */
  get free(): number {
    return this.campaignFree;
  }

  /**
   * The verdict on one due lead, in the order the rules apply: the suppression list,
   * then the person's hours, rules and caps (section 11, `held`), then rule 3 within the
   * pass. A 'dial' takes the slot and the number.
   */
  judge(phone: string, facts: { suppressed: boolean; held: boolean }): LeadVerdict {
    if (facts.suppressed) return 'suppressed';
    if (facts.held) return 'held';
    if (this.phones.has(phone)) return 'phone-busy';
    this.phones.add(phone);
    this.campaignFree--;
    this.accountLive++;
    return 'dial';
  }
}

/** What a pass saw that bears on when the next one should run. */
export interface PassFindings {
  now: number;
  maxSleepMs: number;
  /** The earliest closed window's opening. */
  nextOpening: number | null;
  /** For each campaign left with free slots: when its next lead falls due (null: none waits). */
  nextDue: readonly (number | null)[];
  /** A claim was refused: its slot is still free, so look again at once. */
  claimRefused: boolean;
}

/** When the scheduler looks again: something can change then (never later than maxSleep, so clock jumps heal). */
export function nextPassAt(f: PassFindings): number {
  if (f.claimRefused) return f.now;
  let at = f.now + f.maxSleepMs;
  if (f.nextOpening !== null) at = Math.min(at, f.nextOpening);
  for (const due of f.nextDue) if (due !== null) at = Math.min(at, Math.max(due, f.now + DUE_FLOOR_MS));
  return at;
}

// Reading the call list

export interface PollTiming {
  /** Start of the last listing round (−∞ before the first). */
  lastPollAt: number;
  minGapMs: number;
  maxGapMs: number;
}

/**
 * Webhook successes waiting for the call list's word on who answered: listed once a
 * page's worth waits, or once the oldest waited long enough. +∞ when none waits.
 */
export function confirmationDueAt(
  waiting: { count: number; oldestEndedAt: number | null },
  t: { lastPollAt: number; minGapMs: number; batch: number; waitMs: number },
): number {
  if (waiting.count === 0 || waiting.oldestEndedAt === null) return Number.POSITIVE_INFINITY;
  if (waiting.count >= t.batch) return t.lastPollAt + t.minGapMs;
  return Math.max(t.lastPollAt + t.minGapMs, waiting.oldestEndedAt + t.waitMs);
}

/**
 * While webhooks arrive the call list is a backstop: a slow cadence, sooner when the
 * oldest live call is overdue (its webhook may be lost), and after a listing that did
 * not find an overdue call's end, again only after `overdueRetryMs`.
 */
export function backstopPollAt(p: { lastPollAt: number; backstopMs: number; oldestPlacedAt: number | null; overdueMs: number; overdueRetryMs: number }): number {
  const backstop = p.lastPollAt + p.backstopMs;
  if (p.oldestPlacedAt === null) return backstop;
  const overdueAt = p.oldestPlacedAt + p.overdueMs;
  return overdueAt <= p.lastPollAt ? p.lastPollAt + p.overdueRetryMs : Math.min(backstop, overdueAt);
}

/** A service that fails listings is not asked again at once: 5 s, 10 s, 20 s… up to the longest gap. */
export function afterFailedRounds(at: number, failedRounds: number, t: PollTiming): number {
  if (failedRounds <= 0) return at;
  return Math.max(at, t.lastPollAt + Math.min(t.maxGapMs, t.minGapMs * 5 * 2 ** (failedRounds - 1)));
}

/** Webhooks count as arriving when one came recently (and the endpoint can take them at all). */
export function webhooksHealthy(p: { enabled: boolean; lastWebhookAt: number; now: number; healthyMs: number }): boolean {
  return p.enabled && p.now - p.lastWebhookAt < p.healthyMs;
}

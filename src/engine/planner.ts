import type { PersonWindow } from '../rules/person-window.js';
import type { CampaignState, LeadState } from '../store/types.js';
import { isOpen, nextOpening } from '../time/window.js';
import { budgetHold, type BudgetHold, type BudgetSpend } from '../stats/budget.js';
import type { CapHold } from './caps.js';
import type { CampaignBudget } from '../config/types.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// What the engine should do next, decided from state already read and the clock's "now":
// which campaigns may take calls and how many, which due lead goes into a slot, and when
// to look again (the scheduler and the call list). Pure: no store, no clock, no timers,
// so each rule is unit-tested without I/O (test/unit/engine-planner.test.ts). The loops
// read, ask here, and write; `explain` and `validate --preview` gather the same facts from
// the store and ask the same functions (planLead), so they cannot disagree with the engine.

/** A lead falling due "now" is looked for at least this much later, so a lead the claim refuses cannot spin the loop. */
export const DUE_FLOOR_MS = 50;

// Dialing

/** What stops all dialing, whatever the campaigns say. */
export interface DialGate {
  stopping: boolean;
  /** Several instances on PostgreSQL: this one's lease is no longer held (docs/design.md §10). */
  leaseLost?: boolean;
  tokenRejected: boolean;
  /** After a 422 for the account, nothing is dialled before this instant. */
  accountPausedUntil: number;
}

/**
 * Whether dialing may go on, or what stops all of it. `daemon-down` is never the dial
 * loop's own verdict: it is how `explain`, reading the store, says that no daemon runs.
 */
export type GateVerdict = 'open' | 'daemon-down' | 'stopping' | 'lease-lost' | 'token-rejected' | 'account-paused';

export function gateVerdict(gate: DialGate, now: number): GateVerdict {
  if (gate.stopping) return 'stopping';
  if (gate.leaseLost) return 'lease-lost';
  if (gate.tokenRejected) return 'token-rejected';
  if (now < gate.accountPausedUntil) return 'account-paused';
  return 'open';
}

export function dialingAllowed(gate: DialGate, now: number): boolean {
  return gateVerdict(gate, now) === 'open';
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

/** Whether a campaign takes calls now, or why not. */
export type CampaignVerdict =
  | { kind: 'campaign-problem'; problem: string }
  | { kind: 'campaign-not-running'; state: Exclude<CampaignState, 'running'> }
  /** `opening`: the window's next opening (null: it never opens again). */
  | { kind: 'window-closed'; opening: number | null }
  | { kind: 'open' };

/** The campaign's side of the rules: a problem stops it, then its state, then its window. */
export function campaignVerdict(c: Pick<RuntimeCampaign, 'state' | 'problem' | 'window'>, now: number): CampaignVerdict {
  if (c.problem) return { kind: 'campaign-problem', problem: c.problem };
  if (c.state !== 'running') return { kind: 'campaign-not-running', state: c.state };
  if (!isOpen(c.window, now)) return { kind: 'window-closed', opening: nextOpening(c.window, now) };
  return { kind: 'open' };
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
    const verdict = campaignVerdict(c, now);
    if (verdict.kind === 'window-closed') {
      if (verdict.opening !== null) opening = opening === null ? verdict.opening : Math.min(opening, verdict.opening);
      continue;
    }
    if (verdict.kind !== 'open') continue;
    const n = live.get(c.id) ?? 0;
    steps.push({ kind: 'fill', campaign: c, live: n, free: c.config.maxCallsInParallel - n });
  }
  return { steps, nextOpening: opening };
}

/** Live calls against the two limits: the campaign's own, and the daemon's over every campaign. */
export interface SlotCounts {
  campaignLive: number;
  campaignMax: number;
  /** Live calls over all campaigns. */
  daemonLive: number;
  /** The daemon's max_calls_in_parallel; undefined or null when not set. */
  daemonMax: number | null | undefined;
}

/** Free slots for one more call (≤ 0: none), and which limit is full when none is free. */
export type SlotVerdict =
  | { kind: 'free'; free: number }
  | { kind: 'campaign-at-limit'; free: number; live: number; max: number }
  | { kind: 'daemon-at-limit'; free: number; live: number; max: number };

export function slotVerdict(s: SlotCounts): SlotVerdict {
  const own = s.campaignMax - s.campaignLive;
  const daemon = s.daemonMax === null || s.daemonMax === undefined ? Number.POSITIVE_INFINITY : s.daemonMax - s.daemonLive;
  const free = Math.min(own, daemon);
  if (own <= 0) return { kind: 'campaign-at-limit', free, live: s.campaignLive, max: s.campaignMax };
  if (daemon <= 0) return { kind: 'daemon-at-limit', free, live: s.daemonLive, max: s.daemonMax as number };
  return { kind: 'free', free };
}

/** What is known of one lead when it is judged. */
export interface LeadFacts {
  state: LeadState;
  nextDueAt: number | null;
  /** The number being worked (the primary, or the secondary at the lead's contact position). */
  phone: string;
  /** On the suppression list. */
  suppressed: boolean;
  /** The called person's hours and calling rules for this number and zone. */
  person: Pick<PersonWindow, 'closedBy' | 'nextOpening'>;
  /**
   * The attempt cap holding the number now. It decides only when nothing before it in the
   * order holds the lead, so a reader may leave it null when something does.
   */
  cap: CapHold | null;
}

/** What else bears on a lead: the campaign, the gate, and the slots. */
export interface LeadContext extends SlotCounts {
  now: number;
  campaign: Pick<RuntimeCampaign, 'state' | 'problem' | 'window'>;
  gate: GateVerdict;
  /** Another live call to the number (rule 3: one at a time, whichever campaign holds it). */
  phoneBusy: boolean;
  /** The campaign's budget and spending; absent or null: no budget. */
  budget?: BudgetFacts | null;
}

/** A campaign's budget with what it has spent, read once per pass. */
export interface BudgetFacts {
  budget: CampaignBudget;
  spend: BudgetSpend;
  /** Calls picked in this pass, not yet in the spend's pending count. */
  extra: number;
  /** The end of the campaign's day (the daily cap's reset). */
  dayEnds: number;
}

/** The verdict on one lead: what holds it, first in the order of the rules, or 'dial'. */
export type LeadPlan =
  | { kind: 'final'; state: LeadState }
  | { kind: 'calling' }
  | Exclude<CampaignVerdict, { kind: 'open' | 'window-closed' }>
  | { kind: 'suppressed' }
  | { kind: 'not-due'; at: number }
  | Extract<CampaignVerdict, { kind: 'window-closed' }>
  /** Outside the person's hours or rules: the first closed gate, and when all open together. */
  | { kind: 'person-hours'; label: string; opening: number | null }
  | { kind: 'attempt-cap'; hold: CapHold }
  | { kind: 'gate'; gate: Exclude<GateVerdict, 'open'> }
  /** One more call could take the campaign over a budget cap. */
  | { kind: 'budget-exhausted'; hold: BudgetHold }
  | { kind: 'number-busy' }
  | Exclude<SlotVerdict, { kind: 'free' }>
  | { kind: 'dial' };

/**
 * The one order of the dialing rules for a lead: its own state, then the campaign (problem,
 * state), the suppression list, its due time, the campaign window, the person's hours and
 * rules, the attempt caps, the gate (daemon, token), the campaign's budget, another live call to the number, the
 * campaign's live-call limit, and the daemon's over all campaigns. The dial loop reaches
 * leads only through the campaign, gate and slot checks of its pass, then asks this for
 * each due lead; `explain` asks it with every fact read from the store.
 */
export function planLead(lead: LeadFacts, x: LeadContext): LeadPlan {
  switch (lead.state) {
    case 'completed':
    case 'reached-max-retries':
    case 'invalid':
    case 'suppressed':
    case 'cancelled':
    case 'moved':
      return { kind: 'final', state: lead.state };
    case 'calling':
      return { kind: 'calling' };
  }
  // A completed campaign with a lead still to call is reopened by the next pass
  // (check-reopen), which then dials the lead: it is judged as the running campaign it becomes.
  const reopens = x.campaign.state === 'completed';
  const campaign = campaignVerdict(reopens ? { state: 'running', problem: x.campaign.problem, window: x.campaign.window } : x.campaign, x.now);
  if (campaign.kind === 'campaign-problem' || campaign.kind === 'campaign-not-running') return campaign;
  if (lead.suppressed) return { kind: 'suppressed' };
  if (lead.nextDueAt !== null && lead.nextDueAt > x.now) return { kind: 'not-due', at: lead.nextDueAt };
  if (campaign.kind === 'window-closed') return campaign;
  const closed = lead.person.closedBy(x.now);
  if (closed) return { kind: 'person-hours', label: closed.label, opening: lead.person.nextOpening(x.now) };
  if (lead.cap) return { kind: 'attempt-cap', hold: lead.cap };
  if (x.gate !== 'open') return { kind: 'gate', gate: x.gate };
  if (x.budget) {
    const hold = budgetHold(x.budget.budget, x.budget.spend, x.budget.extra, x.budget.dayEnds);
    if (hold) return { kind: 'budget-exhausted', hold };
  }
  if (x.phoneBusy) return { kind: 'number-busy' };
  const slots = slotVerdict(x);
  if (slots.kind !== 'free') return slots;
  return { kind: 'dial' };
}

/**
 * The slots of one pass: each campaign's own limit and the account's (daemon
 * max_calls_in_parallel) over every campaign, and the numbers already picked (rule 3
 * within the pass: one live call per number, whichever campaign holds it).
 */
export class SlotPlan {
  private daemonLive: number;
  private readonly phones = new Set<string>();
  private step: Extract<CampaignStep, { kind: 'fill' }> | null = null;
  private campaignLive = 0;
  private budget: BudgetFacts | null = null;

  constructor(
    private readonly accountMaxCalls: number | undefined,
    live: ReadonlyMap<number, number>,
  ) {
    this.daemonLive = [...live.values()].reduce((a, b) => a + b, 0);
  }

  /** Starts a campaign's turn; returns its free slots (≤ 0: a freed slot wakes the loop). */
  begin(step: Extract<CampaignStep, { kind: 'fill' }>, budget: BudgetFacts | null = null): number {
    this.step = step;
    this.campaignLive = step.live;
    this.budget = budget;
    return this.free;
  }

  /** The budget cap holding the current campaign before any lead is judged (null: none, or no budget). */
  budgetHold(): BudgetHold | null {
    const b = this.budget;
    return b ? budgetHold(b.budget, b.spend, b.extra, b.dayEnds) : null;
  }

  private counts(): SlotCounts {
    // The step's free slots are its limit less its live calls when the pass began.
    const max = this.step ? this.step.live + this.step.free : 0;
    return { campaignLive: this.campaignLive, campaignMax: max, daemonLive: this.daemonLive, daemonMax: this.accountMaxCalls };
  }

  /** Slots left in the current campaign's turn. */
  get free(): number {
    return slotVerdict(this.counts()).free;
  }

  /**
   * The verdict on one due lead of the current campaign (planLead; the pass checked the
   * gate before it began). A 'dial' takes the slot and the number.
   */
  judge(lead: LeadFacts, now: number): LeadPlan {
    if (!this.step) throw new Error('SlotPlan.judge before begin');
    const plan = planLead(lead, { ...this.counts(), now, campaign: this.step.campaign, gate: 'open', phoneBusy: this.phones.has(lead.phone), budget: this.budget });
    if (plan.kind === 'dial') {
      if (this.budget) this.budget = { ...this.budget, extra: this.budget.extra + 1 };
      this.phones.add(lead.phone);
      this.campaignLive++;
      this.daemonLive++;
    }
    return plan;
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
  /** A completed campaign was reopened: its leads are judged by the next pass, at once. */
  reopened?: boolean;
}

/** When the scheduler looks again: something can change then (never later than maxSleep, so clock jumps heal). */
export function nextPassAt(f: PassFindings): number {
  if (f.claimRefused || f.reopened) return f.now;
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

import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import { isOpen } from '../../time/window.js';
import type { GroupCommit } from '../../store/group-commit.js';
import type { Database } from '../../store/types.js';
import { claimAttemptsIn, liveCountsByCampaign, markUnknown, newestUnconfirmedSuccess, type ClaimInput } from '../../store/attempts.js';
import { completeRunningCampaign, reopenCompletedCampaign, setCampaignProblem } from '../../store/campaigns.js';
import { dueCallbackLeads } from '../../store/callbacks.js';
import { deferLead, dueLeads, hasActiveLeads, hasLeads, nextDueAt, suppressLead, type DueLead } from '../../store/due-leads.js';
import type { CampaignView } from '../campaign-view.js';
import { dial, type DialReport } from '../dialer.js';
import { errText, type EngineLoop, type EngineMetrics, type PollNudge } from '../engine-types.js';
import { deferHeld, holdOf, readLeadFacts } from '../person-hold.js';
import { dialingAllowed, gateLookAt, nextPassAt, planCampaigns, SlotPlan, type DialGate } from '../planner.js';
import { readBudgetFacts } from '../budget-read.js';
import { budgetPaused } from '../../stats/budget.js';
import { ACCOUNT_PAUSE_MS, CANDIDATE_MARGIN, CLAIM_MAX_AGE_MS, CONFIRM_WINDOW_MS, MAX_SLEEP_MS, PHONE_BUSY_DEFER_MS, STORE_RETRY_MS, STORE_RETRY_TRIES } from '../policy.js';
import type { PredialDeps } from '../predial.js';
import { createPredialStep } from '../predial-step.js';
import type { EngineClient } from '../ports.js';
import type { RuntimeCampaign } from '../runtime-campaign.js';
import type { ServiceState } from '../service-state.js';
import type { WakeSignal } from '../wake-signal.js';
import { isFenced } from '../../store/fencing.js';
import { suppressedAmong } from '../../store/suppressions.js';
import { settleLeadVariants } from '../../store/variants.js';
import { pickVariant } from '../variant-pick.js';

// The dial loop: claims due leads into free slots (all claims of a pass in one durable
// commit, shared with the other work and accounts of the same turn, through claimAttemptsIn,
// the store's one writer of intents) and hands each claimed attempt
// to the dialer. It sleeps until something can change (a slot frees, a lead falls due, a
// window opens), never longer than 30 s, so suspend and clock jumps heal. It also moves
// campaigns to completed and back, since only a pass knows that no lead is left.

/** A due lead; a callback's carries the asking call's extracted variables. */
type DueCandidate = DueLead & { previous_json?: string | null };

function parseObject(json: string | null): Record<string, unknown> {
  if (json === null) return {};
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The asking call's extracted variables as the callback call's `previous.NAME` variables. */
function previousVariables(json: string | null): Record<string, unknown> {
  return Object.fromEntries(Object.entries(parseObject(json)).map(([k, v]) => [`previous.${k}`, v]));
}

/** What the dial loop knows of the lease (src/ha/elector.ts). */
export interface LeaseView {
  /** Whether claims may be made and calls sent now. */
  holds(): boolean;
  /** The fencing token claims carry; null while not active. */
  token(): number | null;
  /** The database refused a claim under this lease: give the role up at once. */
  lost(): void;
  /**
   * Several active instances (docs/several-instances.md): the account's lease claims are
   * made under instead of the one lease; undefined while it is not held (then no claim is
   * made, never one judged against the one lease).
   */
  accountFence?(): { account: string; fence: number } | undefined;
  /** A claim pass failed with `err`: true when it was the account's fence (the account is dropped). */
  refused?(err: unknown): boolean;
  /** Follows one make_call request until it settles (a handover of the account awaits them). */
  track?<T>(request: Promise<T>): Promise<T>;
}

export interface DialLoopDeps {
  db: Kysely<Database>;
  /** The pass's claims are committed here, durably, before any make_call; and the answers. */
  commit: GroupCommit;
  client: EngineClient;
  clock: Clock;
  logger: Logger;
  metrics?: EngineMetrics | undefined;
  /** Identifies this daemon's in-flight attempts. */
  instanceId: string;
  /** The lease this instance dials under (PostgreSQL with several instances); absent: always held. */
  lease?: LeaseView | undefined;
  accountMaxCalls?: number | undefined;
  settleMs: number;
  campaigns: CampaignView;
  service: ServiceState;
  /** Rung when a slot frees or the campaigns change. */
  wake: WakeSignal;
  poll: PollNudge;
  /** How pre-dial checks are sent (predial.ts); without it a campaign's checks fail and its leads wait. */
  predial?: PredialDeps | undefined;
}

export interface DialLoop extends EngineLoop {
  /** Waits up to `graceMs` for the make_call requests in flight; true when some are still out. */
  drain(graceMs: number): Promise<boolean>;
  inflight(): number;
}

export function createDialLoop(deps: DialLoopDeps): DialLoop {
  const { db, commit, client, clock, campaigns, service, poll } = deps;
  const log = deps.logger;
  const inflight = new Set<Promise<DialReport>>();
  const campaignLoggers = new Map<string, Logger>();
  let stopping = false;
  let accountPausedUntil = 0;
  let running: Promise<void> = Promise.resolve();

  /** Aborted by stop(): pre-dial checks in flight end, so their attempts are withdrawn rather than left to recovery. */
  let stopSignal = new AbortController();
  const predialStep = createPredialStep({ db, commit, logger: campaignLogger, metrics: deps.metrics, predial: deps.predial, now: () => clock.now(), stopping: () => stopSignal.signal });

  function gate(): DialGate {
    return { stopping, leaseLost: deps.lease ? !deps.lease.holds() : false, tokenRejected: service.tokenRejected(), accountPausedUntil };
  }

  /** One child logger per campaign, made once: pino serialises a child's bindings when it is created. */
  function campaignLogger(name: string): Logger {
    let child = campaignLoggers.get(name);
    if (!child) {
      child = log.child({ campaign: name });
      campaignLoggers.set(name, child);
    }
    return child;
  }

  /** The instant a lead may be called: the campaign window and the person's own (rule 1; who may be called, docs/design.md §11). */
  function windowsOpen(c: RuntimeCampaign, lead: DueLead, at: number): boolean {
    if (!isOpen(c.window, at)) return false;
    return c.person(lead.contact_phone ?? lead.phone_number, lead.timezone).isOpen(at);
  }

  /**
   * One pass: fill the free slots of every running campaign with due leads, all claims
   * committed in one transaction, then one dial each. Returns when to look again.
   */
  async function pass(): Promise<number> {
    const now = clock.now();
    if (!dialingAllowed(gate(), now)) return gateLookAt(gate(), now, MAX_SLEEP_MS);
    // The live-call cap is the account's: only its campaigns' calls count against it.
    const live = new Map([...(await liveCountsByCampaign(db, campaigns.scope()))].filter(([id]) => campaigns.owns(id)));
    for (const c of campaigns.values()) deps.metrics?.liveCalls(c.name, live.get(c.id) ?? 0);
    deps.metrics?.daemonLiveCalls?.([...live.values()].reduce((a, b) => a + b, 0));

    const plan = planCampaigns(campaigns.values(), live, now);
    const slots = new SlotPlan(deps.accountMaxCalls, live);
    const picked: { c: RuntimeCampaign; lead: DueCandidate; input: ClaimInput }[] = [];
    const nextDue: (number | null)[] = [];
    let reopened = false;
    for (const step of plan.steps) {
      const c = step.campaign;
      if (step.kind === 'check-reopen') {
        if (await hasActiveLeads(db, c.id)) {
          await reopen(c, now);
          reopened = true;
        }
        continue;
      }
      const budget = await readBudgetFacts(db, c, now);
      if (slots.begin(step, budget) <= 0) continue; // a freed slot wakes us
      const budgetHeld = slots.budgetHold();
      if (budget) deps.metrics?.budget?.(c.name, budget.spend.spent, budgetPaused(budgetHeld));
      if (budgetHeld) {
        // Paused (budget): a daily cap resumes at the campaign's midnight; a raised cap
        // (reload) or a call's cost arriving wakes the loop, or the longest sleep does.
        if (budgetHeld.resumesAt !== null) nextDue.push(budgetHeld.resumesAt);
        continue;
      }
      // A few more than the free slots: some may be suppressed or outside their own hours.
      const candidates = await dueCandidates(c, now, slots.free + CANDIDATE_MARGIN);
      const held: Parameters<typeof deferHeld>[1][number][] = [];
      // The store's suppression list for every candidate in one query: a number added since
      // the engine's copy was read must not be dialled, and a query per lead was one more
      // round trip per call on PostgreSQL.
      const listed = await suppressedAmong(db, candidates.map((l) => l.contact_phone ?? l.phone_number));
      for (const lead of candidates) {
        if (slots.free <= 0) break;
        const phone = lead.contact_phone ?? lead.phone_number;
        // Who may be called (docs/design.md §11): the person's zones, hours and regional rules, then attempts per number.
        const facts = await readLeadFacts(db, c, lead, phone, now, (p) => campaigns.suppressed(p) || listed.has(p));
        const plan = slots.judge(facts, now);
        switch (plan.kind) {
          case 'suppressed':
            await suppressLead(db, lead.id, now);
            break;
          case 'person-hours':
          case 'attempt-cap':
            held.push({ leadId: lead.id, ...holdOf(plan, now)! });
            break;
          case 'number-busy':
            // Rule 3 within this pass: another lead (here or in another campaign) has this number.
            await deferLead(db, lead.id, now + PHONE_BUSY_DEFER_MS, 'another call to this number is live', now);
            break;
          case 'dial':
            picked.push({
              c,
              lead,
              input: { campaignId: c.id, leadId: lead.id, contactPosition: lead.contact_position, phoneNumber: phone, assistantId: c.config.assistantId, owner: deps.instanceId, now },
            });
            break;
          default:
            // The campaign, its window, the gate and the slots were checked for this pass,
            // and the due query returns only due leads: nothing else can hold one here.
            break;
        }
      }
      // The leads held by who-may-be-called (docs/design.md §11), deferred to their openings in one commit.
      await deferHeld(db, held, now);
      if (slots.free > 0) nextDue.push(await nextDueAt(db, c.id));
      if (candidates.length === 0 && c.config.markCompleteWhenNoLeads && step.live === 0) {
        await maybeComplete(c, now);
      }
    }

    await giveVariants(picked);
    // The claim carries the lease's token: the database refuses it if another instance took over meanwhile.
    const token = deps.lease?.token();
    if (deps.lease?.accountFence) {
      // Per account: a claim without its account's fence would be judged against the one
      // lease instead, which this instance may hold for its other duties.
      const accountFence = deps.lease.accountFence();
      if (!accountFence) return clock.now() + MAX_SLEEP_MS;
      for (const p of picked) p.input.accountFence = accountFence;
    }
    const inputs = picked.map((p) => p.input);
    const fence = token === null || token === undefined ? {} : { fenceToken: token };
    const claims = inputs.length === 0 ? [] : await commit.run((trx) => claimAttemptsIn(trx, inputs, fence), { durable: true });
    let claimRefused = false;
    for (const [i, claim] of claims.entries()) {
      const { c, lead } = picked[i]!;
      if (claim.ok) {
        startDial(c, lead, claim.attempt);
        continue;
      }
      // The slot counted for this lead is still free: look again at once for another.
      claimRefused = true;
      // Rule 3: wait for the other call to this number to end, without blocking the queue.
      if (claim.reason === 'phone-live') await deferLead(db, lead.id, now + PHONE_BUSY_DEFER_MS, 'another call to this number is live', now);
    }
    return nextPassAt({ now, maxSleepMs: MAX_SLEEP_MS, nextOpening: plan.nextOpening, nextDue, claimRefused, reopened });
  }

  /**
   * The campaign's due leads: callbacks the person asked for first (README, "Callbacks the
   * person asks for"), then the rest by due time. A callback lead carries the asking
   * call's extracted variables.
   */
  async function dueCandidates(c: RuntimeCampaign, now: number, limit: number): Promise<DueCandidate[]> {
    const callbacks = c.config.callbacks ? await dueCallbackLeads(db, c.id, now, limit) : [];
    const ordinary = await dueLeads(db, c.id, now, limit);
    if (callbacks.length === 0) return ordinary;
    const first = new Set(callbacks.map((l) => l.id));
    return [...callbacks, ...ordinary.filter((l) => !first.has(l.id))];
  }

  /**
   * Assistant variants (README, "Assistant variants"): each picked lead of a campaign with
   * variants is called with its stored variant's assistant; a lead without one is given one
   * now, before its first claim, so every attempt carries the same variant.
   */
  async function giveVariants(picked: { c: RuntimeCampaign; lead: DueLead; input: ClaimInput }[]): Promise<void> {
    const withVariants = picked.filter((p) => p.c.config.variants !== undefined);
    if (withVariants.length === 0) return;
    for (const c of new Set(withVariants.map((p) => p.c))) {
      const variants = c.config.variants!;
      const known = variants.map((v) => v.name);
      const mine = withVariants.filter((p) => p.c === c);
      // A lead read with a variant of the file holds it for good: only the others are settled.
      const fresh = mine.filter((p) => p.lead.variant === null || !known.includes(p.lead.variant));
      const stored = await settleLeadVariants(db, fresh.map((p) => ({ leadId: p.lead.id, variant: pickVariant(variants, p.lead.id).name })), known);
      for (const p of mine) {
        const name = stored.get(p.lead.id) ?? p.lead.variant;
        p.input.assistantId = (variants.find((v) => v.name === name) ?? pickVariant(variants, p.lead.id)).assistantId;
      }
    }
  }

  function startDial(c: RuntimeCampaign, lead: DueCandidate, attempt: Parameters<typeof dial>[1]['attempt']): void {
    const variables = { ...parseObject(lead.variables_json), ...previousVariables(lead.previous_json ?? null) };
    let stale = false;
    const task = dial(
      { db, commit, client, logger: campaignLogger(c.name), now: () => clock.now(), settleMs: deps.settleMs },
      {
        attempt,
        variables,
        canSend: () => {
          const current = campaigns.get(c.id);
          const at = clock.now();
          stale = at - Number(attempt.created_at) > CLAIM_MAX_AGE_MS;
          return !stale && dialingAllowed(gate(), at) && current?.state === 'running' && windowsOpen(c, lead, at);
        },
        notSent: () => {
          const at = clock.now();
          // A stale claim is judged again at once: nothing about the lead says wait.
          if (stale) return { retryAt: at, reason: `claimed ${Math.round((at - Number(attempt.created_at)) / 60_000)} min before it could be sent (the process stalled): judged again` };
          return { retryAt: c.person(lead.contact_phone ?? lead.phone_number, lead.timezone).nextOpening(at) ?? at + 3600_000, reason: 'window closed before the request could be sent' };
        },
        assistantMissing: async () => {
          await setCampaignProblem(db, c.id, `assistant ${attempt.assistant_id} not found by the service (404)`, clock.now());
          await campaigns.refresh(true);
        },
        ...(c.config.predial ? { check: () => predialStep(c, attempt, variables) } : {}),
      },
    )
      .then(async (report) => {
        await onDialReport(c, report);
        return report;
      })
      .catch(async (err: unknown): Promise<DialReport> => {
        // A store error (SQLITE_BUSY from another writer…) while recording the answer: the
        // call may exist, so the attempt is followed as unknown and the call list settles
        // it (rule 6). Left unhandled, the rejection would crash the daemon.
        const detail = 'make_call result could not be recorded';
        log.error({ err: errText(err), attempt: attempt.id }, detail);
        await markUnknownAfterStoreError(attempt.id, detail);
        poll.urgent();
        return { kind: 'unknown', detail };
      });
    inflight.add(task);
    void deps.lease?.track?.(task);
    void task.then(
      (report) => {
        inflight.delete(task);
        // A placed (or unknown) call still holds its slot: waking the scheduler for it
        // would only re-read the same counts. Every other answer frees the slot.
        if (report.kind !== 'placed' && report.kind !== 'unknown') deps.wake.wake();
      },
      () => {
        inflight.delete(task);
        deps.wake.wake();
      },
    );
  }

  /** Moves a `dialing` attempt to unknown after a store error, trying again while the store is busy. */
  async function markUnknownAfterStoreError(attemptId: number, detail: string): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await markUnknown(db, attemptId, { detail, settleDeadline: clock.now() + deps.settleMs });
        return;
      } catch (err) {
        if (tries >= STORE_RETRY_TRIES || stopping) {
          log.error({ err: errText(err), attempt: attemptId }, 'attempt left dialing; it is recovered as unknown at the next start');
          return;
        }
        await clock.sleep(STORE_RETRY_MS);
      }
    }
  }

  async function onDialReport(c: RuntimeCampaign, report: DialReport): Promise<void> {
    const now = clock.now();
    switch (report.kind) {
      case 'placed':
        deps.metrics?.callPlaced(c.name);
        poll.replan();
        if (service.status().api !== 'ok') service.set('ok', null);
        return;
      case 'unknown':
        deps.metrics?.unknownAttempt();
        poll.urgent();
        return;
      case 'token-rejected':
        service.tokenRefused();
        return;
      case 'assistant-not-found':
        return; // the campaign was stopped before the attempt was refused (assistantMissing)
      case 'account-rejected':
        accountPausedUntil = now + ACCOUNT_PAUSE_MS;
        log.error({ detail: report.detail }, 'the service refused calls for the account; dialing pauses for 5 minutes');
        return;
      default:
        return;
    }
  }

  async function reopen(c: RuntimeCampaign, now: number): Promise<void> {
    await reopenCompletedCampaign(db, c.id, now);
    log.info({ campaign: c.name }, 'campaign has new leads; running again');
    await campaigns.refresh(true);
  }

  async function maybeComplete(c: RuntimeCampaign, now: number): Promise<void> {
    if (await hasActiveLeads(db, c.id)) return;
    // A webhook success may still turn out to be a voicemail (rule 5 retries it): the
    // campaign is complete only once the call list has said who answered.
    const unconfirmed = await newestUnconfirmedSuccess(db, c.id, now - CONFIRM_WINDOW_MS);
    if (unconfirmed !== null) {
      // One poll round that started after the last of them ended settles them all.
      if (unconfirmed >= poll.lastPollAt()) poll.urgent();
      return;
    }
    if (!(await hasLeads(db, c.id))) return;
    // Refused when a lead became active again since the reads above (the store checks it).
    if (!(await completeRunningCampaign(db, c.id, now))) return;
    log.info({ campaign: c.name }, 'campaign completed: every lead is final');
    await campaigns.refresh(true);
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      let nextAt = clock.now() + MAX_SLEEP_MS;
      try {
        nextAt = await pass();
      } catch (err) {
        if (deps.lease?.refused?.(err)) {
          // The account's lease was taken by another instance: the account is dropped. Nothing was claimed.
          log.warn('claim refused by the database: this instance no longer holds the account');
        } else if (isFenced(err)) {
          // Not a store failure: another instance holds the lease now. Nothing was claimed.
          log.warn('claim refused by the database: this instance no longer holds the lease');
          deps.lease?.lost();
        } else {
          log.error({ err: errText(err) }, 'scheduler tick failed; retrying');
        }
        nextAt = clock.now() + 1000;
      }
      if (stopping) break;
      await deps.wake.sleep(clock, Math.min(MAX_SLEEP_MS, Math.max(0, nextAt - clock.now())));
    }
  }

  return {
    start() {
      stopping = false;
      stopSignal = new AbortController();
      running = loop();
    },
    stop() {
      stopping = true;
      stopSignal.abort();
      deps.wake.wake();
    },
    done: () => running,
    async drain(graceMs) {
      const drained = Promise.allSettled([...inflight]);
      let timedOut = false;
      const cancel = new AbortController();
      await Promise.race([drained, clock.sleep(graceMs, cancel.signal).then(() => (timedOut = true))]);
      cancel.abort();
      return timedOut;
    },
    inflight: () => inflight.size,
  };
}

import type { Kysely } from 'kysely';
import { SETTLE_HELD_PREFIX } from '../engine/call-time.js';
import { capHold, capText } from '../engine/caps.js';
import { readLeadFacts } from '../engine/person-hold.js';
import { planLead, type GateVerdict, type LeadPlan } from '../engine/planner.js';
import { runtimeCampaign, type RuntimeCampaign } from '../engine/runtime-campaign.js';
import { HEARTBEAT_STALE_MS } from '../lifecycle/daemon-row.js';
import type { PersonWindow } from '../rules/person-window.js';
import { attemptsOfLead, listLiveAttempts } from '../store/attempts.js';
import { listCampaigns } from '../store/campaigns.js';
import { leadsAheadInQueue, leadsWithNumber, newestDaemonRow, secondaryNumbers } from '../store/explain-reads.js';
import type { AttemptRow, CampaignRow, DaemonRow, Database, LeadRow } from '../store/types.js';
import { formatIn, formatLocal } from '../time/duration-format.js';
import { budgetText } from '../stats/budget.js';
import { callbacksOfLead } from '../store/callbacks.js';
import { readBudgetFacts } from '../engine/budget-read.js';

// `campaignd explain`: for each lead with a number, the exact reason it is or is not
// being called now. It reads the facts the engine decides on (the campaign, the
// suppression list, the person's hours and caps, the live attempts, the daemon's row with
// its daemon-wide limit) and asks the engine's own planner (planLead), so its answer is
// the engine's answer; only the words are its own.

export interface ExplainedAttempt {
  id: number;
  phone_number: string;
  contact_position: number;
  state: string;
  outcome: string | null;
  call_status: string | null;
  call_id: string | null;
  detail: string | null;
  created_at: string;
  ended_at: string | null;
}

export interface ExplainedLead {
  campaign: string;
  lead_id: number;
  state: string;
  /** Machine-readable reason, e.g. `window-closed`, `retry-not-due`, `at-limit`, `daemon-at-limit`. */
  reason: string;
  /** One sentence for a person. */
  message: string;
  /** When the lead can next be called, in the campaign's zone (null: never, or now). */
  next_call_at: string | null;
  /** The called person's zone(s) and where they came from: the lead's column, its number, or the campaign (none known). */
  zones: readonly string[];
  zone_source: 'lead' | 'number' | 'campaign';
  /** Regions of the number that calling rules are matched against (only when the campaign has rules). */
  regions: readonly string[];
  contact_position: number;
  contacts: string[];
  attempts: ExplainedAttempt[];
  /** Callbacks the person asked for in this lead's calls, oldest first (README, "Callbacks the person asks for"). */
  callbacks: ExplainedCallback[];
}

/** One asked callback: the words, the zone they were read in, and what became of them. */
export interface ExplainedCallback {
  /** The call in which it was asked. */
  attempt_id: number;
  asked: string;
  zone: string | null;
  /** 'scheduled', 'placed', 'refused' or 'dropped' (the lead ended otherwise first). */
  state: string;
  /** The moment the words name, in the person's zone (null when they could not be read). */
  asked_at: string | null;
  /** When the lead is due: the first moment the window and calling rules allow from asked_at. */
  scheduled_at: string | null;
  /** Why scheduled_at is later than asked_at. */
  moved_reason: string | null;
  refused_reason: string | null;
  /** Why a scheduled callback was dropped: the lead's final state and its reason. */
  dropped_reason: string | null;
  /** The callback's own call, once it ended. */
  callback_attempt_id: number | null;
}

export interface Explanation {
  phone_number: string;
  daemon_running: boolean;
  leads: ExplainedLead[];
}

const iso = (ms: number, zone: string): string => formatLocal(ms, zone);

/** Whether the daemon of this row runs now (a fresh heartbeat, not stopped, its process alive). */
function daemonRuns(daemon: DaemonRow | undefined, now: number, isPidAlive: (pid: number) => boolean): boolean {
  return !!daemon && daemon.stopped_at === null && now - daemon.heartbeat_at <= HEARTBEAT_STALE_MS && isPidAlive(daemon.pid);
}

/** What stops all dialing as a reader of the store sees it: no daemon, or the service refusing its token. */
function gateOf(daemon: DaemonRow | undefined, running: boolean): GateVerdict {
  if (!running) return 'daemon-down';
  return daemon?.api_status === 'token-rejected' ? 'token-rejected' : 'open';
}

/** Explains every lead whose primary or secondary number is `phone`. */
export async function explainNumber(db: Kysely<Database>, phone: string, now: number, isPidAlive: (pid: number) => boolean): Promise<Explanation> {
  const rows = await leadsWithNumber(db, phone);
  const daemon = await newestDaemonRow(db);
  const daemonRunning = daemonRuns(daemon, now, isPidAlive);
  const leads: ExplainedLead[] = [];
  if (rows.length === 0) return { phone_number: phone, daemon_running: daemonRunning, leads };
  const campaignRows = new Map((await listCampaigns(db)).map((c) => [c.id, c]));
  const live = await listLiveAttempts(db);
  const world: World = {
    live,
    now,
    gate: gateOf(daemon, daemonRunning),
    // `?? null`: a database not yet migrated to 0011 has no such column.
    daemonMax: daemon?.max_calls_in_parallel ?? null,
  };
  for (const lead of rows) {
    const row = campaignRows.get(lead.campaign_id);
    if (!row) continue;
    const campaign = runtimeCampaign(row);
    // The primary, then the secondary numbers in order: index = contact_position.
    const contacts = [lead.phone_number, ...(await secondaryNumbers(db, lead.id))];
    const attempts = await attemptsOfLead(db, lead.id);
    const number = contacts[lead.contact_position] ?? lead.phone_number;
    const person = campaign.person(number, lead.timezone);
    const plan = await planOf(db, world, lead, campaign, number);
    const why = await reason(db, { lead, row, campaign, phone: number, live, now, person, plan });
    leads.push({
      campaign: row.name,
      lead_id: lead.id,
      state: lead.state,
      reason: why.code,
      message: why.message,
      next_call_at: why.at === null ? null : iso(why.at, campaign.timezone),
      zones: person.zones,
      zone_source: person.zoneSource,
      regions: person.regions,
      contact_position: lead.contact_position,
      contacts,
      attempts: attempts.map((a) => explainAttempt(a, campaign.timezone)),
      callbacks: (await callbacksOfLead(db, lead.id)).map(explainCallback),
    });
  }
  return { phone_number: phone, daemon_running: daemonRunning, leads };
}

function explainCallback(c: Awaited<ReturnType<typeof callbacksOfLead>>[number]): ExplainedCallback {
  const zone = c.zone ?? 'UTC';
  return {
    attempt_id: Number(c.attempt_id),
    asked: c.asked,
    zone: c.zone,
    state: c.state,
    asked_at: c.asked_at === null ? null : iso(Number(c.asked_at), zone),
    scheduled_at: c.due_at === null ? null : iso(Number(c.due_at), zone),
    moved_reason: c.moved_reason,
    refused_reason: c.refused_reason,
    dropped_reason: c.dropped_reason,
    callback_attempt_id: c.placed_attempt_id === null ? null : Number(c.placed_attempt_id),
  };
}

/** What bears on every lead alike: the live attempts, the gate and the daemon-wide limit. */
interface World {
  live: readonly AttemptRow[];
  now: number;
  gate: GateVerdict;
  daemonMax: number | null;
}

/** The planner's verdict on a lead, from the facts in the store (the dial loop's question, asked from outside it). */
async function planOf(db: Kysely<Database>, w: World, lead: LeadRow, campaign: RuntimeCampaign, phone: string): Promise<LeadPlan> {
  const facts = await readLeadFacts(db, campaign, lead, phone, w.now);
  return planLead(facts, {
    now: w.now,
    campaign,
    gate: w.gate,
    phoneBusy: w.live.some((a) => a.phone_number === phone),
    campaignLive: w.live.filter((a) => a.campaign_id === campaign.id).length,
    campaignMax: campaign.config.maxCallsInParallel,
    daemonLive: w.live.length,
    daemonMax: w.daemonMax,
    budget: await readBudgetFacts(db, campaign, w.now),
  });
}

function explainAttempt(a: AttemptRow, zone: string): ExplainedAttempt {
  return {
    id: a.id,
    phone_number: a.phone_number,
    contact_position: a.contact_position,
    state: a.state,
    outcome: a.outcome,
    call_status: a.call_status,
    call_id: a.call_id,
    detail: a.detail,
    created_at: iso(a.created_at, zone),
    ended_at: a.ended_at === null ? null : iso(a.ended_at, zone),
  };
}

interface ReasonInput {
  lead: LeadRow;
  row: CampaignRow;
  campaign: RuntimeCampaign;
  /** The number being worked. */
  phone: string;
  live: readonly AttemptRow[];
  now: number;
  person: PersonWindow;
  plan: LeadPlan;
}

interface Reason {
  code: string;
  message: string;
  at: number | null;
}

/** The planner's verdict in words, with when the lead can next be called. */
async function reason(db: Kysely<Database>, x: ReasonInput): Promise<Reason> {
  const { lead, campaign, now, plan, phone, person } = x;
  const zone = campaign.timezone;
  const when = (at: number): string => `${iso(at, zone)} (${formatIn(at - now)})`;
  const due = Math.max(lead.next_due_at ?? now, now);
  const opening = person.nextOpening(due);
  const zoneNote = zoneText(person, zone);
  switch (plan.kind) {
    case 'final':
      return finalReason(lead);
    case 'calling':
      return callingReason(x, when);
    case 'campaign-problem':
      return { code: 'campaign-problem', message: `campaign "${x.row.name}" cannot dial: ${plan.problem}`, at: null };
    case 'campaign-not-running':
      return { code: `campaign-${plan.state}`, message: `campaign "${x.row.name}" is ${plan.state}; "campaignd campaign resume ${x.row.name}" continues it`, at: null };
    case 'suppressed':
      return { code: 'suppressed', message: `${phone} is on the suppression list: it will be marked suppressed, never dialled`, at: null };
    case 'not-due': {
      const prefix = lead.state === 'retry-scheduled' ? `retry of contact ${lead.contact_position} (${phone}) is due` : 'due';
      // A cap that still holds the number when the retry falls due is named with its end.
      const later = await capHold(db, person.caps, phone, plan.at);
      if (later && later.until > plan.at) {
        const next = person.nextOpening(later.until) ?? later.until;
        return {
          code: 'attempt-cap',
          message: `${prefix} at ${when(plan.at)}, but ${capText(later)}; the number may be called again at ${when(later.until)}${zoneNote}`,
          at: next,
        };
      }
      const extra = opening !== null && opening > plan.at ? `; the window then opens at ${when(opening)}` : '';
      return { code: 'retry-not-due', message: `${prefix} at ${when(plan.at)}${lead.state_reason ? ` (${lead.state_reason})` : ''}${extra}${zoneNote}`, at: opening ?? plan.at };
    }
    case 'window-closed': {
      const next = opening ?? plan.opening;
      return { code: 'window-closed', message: plan.opening === null ? 'the calling window never opens (check allowed_days and blackout_dates)' : `the calling window is closed until ${when(next!)}`, at: next };
    }
    case 'budget-exhausted':
      if (plan.hold.cap === 'first_cost') return { code: 'budget-exhausted', message: `waiting for a price (budget): ${budgetText(plan.hold)}`, at: null };
      return {
        code: 'budget-exhausted',
        message: `paused (budget): ${budgetText(plan.hold)}; ${plan.hold.resumesAt === null ? 'raise budget.max_cost in the campaign file and reload (SIGHUP) to resume' : `resumes at ${when(plan.hold.resumesAt)}`}`,
        at: plan.hold.resumesAt,
      };
    case 'person-hours': {
      const code = plan.label.startsWith('lead_local_hours') ? 'lead-local-hours' : 'calling-rule';
      return { code, message: `outside the person's hours: ${plan.label}, until ${plan.opening === null ? 'never' : when(plan.opening)}${zoneNote}`, at: plan.opening };
    }
    case 'attempt-cap': {
      const next = person.nextOpening(plan.hold.until) ?? plan.hold.until;
      return { code: 'attempt-cap', message: `${capText(plan.hold)}; the number may be called again at ${when(plan.hold.until)}`, at: next };
    }
    case 'gate':
      return plan.gate === 'daemon-down'
        ? { code: 'daemon-down', message: 'due now, but no daemon is running ("campaignd run")', at: now }
        : plan.gate === 'token-rejected'
          ? { code: 'token-rejected', message: 'due now, but the service rejects the API token: dialing is stopped until it works', at: now }
          : { code: plan.gate, message: `due now, but dialing is stopped (${plan.gate})`, at: now };
    case 'number-busy': {
      const other = x.live.find((a) => a.phone_number === phone);
      return { code: 'number-busy', message: `another call to ${phone} is live${other ? ` (attempt ${other.id})` : ''}; this lead waits for it to end`, at: null };
    }
    case 'campaign-at-limit':
      return { code: 'at-limit', message: `campaign at its live-call limit (${plan.live}/${plan.max}); called when a slot frees`, at: null };
    case 'daemon-at-limit':
      return {
        code: 'daemon-at-limit',
        message: `the daemon-wide limit of live calls over all campaigns is reached (max_calls_in_parallel ${plan.live}/${plan.max}); called when a slot frees in any campaign`,
        at: null,
      };
    case 'dial': {
      const n = await leadsAheadInQueue(db, x.row.id, lead.next_due_at ?? now, lead.id);
      return { code: 'due', message: n === 0 ? 'due now: next in line for a free slot' : `due now: ${n} lead(s) ahead of it in the queue`, at: now };
    }
  }
}

/** A lead in a final state: why it is not called again. */
function finalReason(lead: LeadRow): Reason {
  switch (lead.state) {
    case 'completed':
      // An on_result rule that completed the lead names itself in the reason.
      if (lead.state_reason) return { code: 'completed', message: `completed by ${lead.state_reason}: it will not be called again`, at: null };
      return { code: 'completed', message: 'completed: a call reached the person; it will not be called again', at: null };
    case 'moved':
      return { code: 'moved', message: `${lead.state_reason ?? 'moved to another campaign'}: it continues there`, at: null };
    case 'reached-max-retries':
      return { code: 'reached-max-retries', message: `not called again: ${lead.state_reason ?? 'every attempt is used up'}`, at: null };
    case 'invalid':
      return { code: 'invalid', message: `invalid: ${lead.state_reason ?? 'the number cannot be called'}`, at: null };
    case 'cancelled':
      return { code: 'cancelled', message: `cancelled${lead.state_reason ? ` (${lead.state_reason})` : ''}: not called again`, at: null };
    default:
      // An opt-out says so in the reason ("opted out of calls"); the list row says where from.
      return { code: 'suppressed', message: `on the do-not-call (suppression) list${lead.state_reason && lead.state_reason !== 'on the suppression list' ? ` (${lead.state_reason})` : ''}: never dialled`, at: null };
  }
}

/** A lead being called: its live attempt, or the unknown one waiting for the call list. */
function callingReason(x: ReasonInput, when: (at: number) => string): Reason {
  const mine = x.live.find((a) => a.lead_id === x.lead.id);
  if (!mine) return { code: 'calling', message: 'a call is being recorded right now', at: null };
  if (mine.state === 'unknown' && mine.detail?.startsWith(SETTLE_HELD_PREFIX)) {
    return {
      code: 'unknown-attempt',
      message: `the answer to make_call was lost, and it is not dialled again: ${mine.detail.slice(SETTLE_HELD_PREFIX.length).trim()} (set api.server_timezone to the service's zone)`,
      at: null,
    };
  }
  if (mine.state === 'unknown') {
    const settle = mine.settle_deadline;
    return {
      code: 'unknown-attempt',
      message: `the answer to make_call was lost (${mine.detail ?? 'unknown'}): the call may exist; waiting for the call list${settle ? `, settled as never placed at ${when(settle)} if it does not appear` : ''}`,
      at: null,
    };
  }
  return { code: 'live-call', message: `call in progress to ${mine.phone_number} since ${when(mine.created_at)}`, at: null };
}

/** Says which zone(s) the person's hours were read in, when that is not the lead's own column. */
function zoneText(person: PersonWindow, campaignZone: string): string {
  if (person.gates.length === 0) return '';
  if (person.zoneSource === 'campaign') return `; no zone is known for this number, so the campaign's zone ${campaignZone} is used`;
  if (person.zoneSource === 'number') {
    return person.zones.length > 1
      ? `; the number may be in ${person.zones.join(', ')}: called only when all of them are inside the hours`
      : `; zone ${person.zones[0]} from the number`;
  }
  return '';
}

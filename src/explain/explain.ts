import type { Kysely } from 'kysely';
import { SETTLE_HELD_PREFIX } from '../engine/call-time.js';
import { runtimeCampaign, type RuntimeCampaign } from '../engine/runtime-campaign.js';
import { HEARTBEAT_STALE_MS } from '../lifecycle/daemon-row.js';
import { LIVE_ATTEMPT_STATES_SQL } from '../store/state-lists.js';
import { type AttemptRow, type CampaignRow, type Database, type LeadRow } from '../store/types.js';
import { formatIn, formatLocal } from '../time/duration-format.js';
import { isOpen, nextOpening } from '../time/window.js';
import { capHold, capText } from '../engine/caps.js';
import type { PersonWindow } from '../rules/person-window.js';

// `campaignd explain`: for each lead with a number, the exact reason it is or is not
// being called now. It reads the same rows the engine decides on and applies the same
// rules in the same order, so its answer is the engine's answer.

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
  /** Machine-readable reason, e.g. `window-closed`, `retry-not-due`, `at-limit`. */
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
}

export interface Explanation {
  phone_number: string;
  daemon_running: boolean;
  leads: ExplainedLead[];
}

const iso = (ms: number, zone: string): string => formatLocal(ms, zone);

/** Explains every lead whose primary or secondary number is `phone`. */
export async function explainNumber(db: Kysely<Database>, phone: string, now: number, isPidAlive: (pid: number) => boolean): Promise<Explanation> {
  const direct = await db.selectFrom('leads').select('id').where('phone_number', '=', phone).execute();
  const viaContacts = await db.selectFrom('lead_contacts').select('lead_id as id').where('phone_number', '=', phone).execute();
  const ids = [...new Set([...direct, ...viaContacts].map((r) => r.id))];
  const daemon = await db.selectFrom('daemons').selectAll().orderBy('heartbeat_at', 'desc').limit(1).executeTakeFirst();
  const daemonRunning = !!daemon && daemon.stopped_at === null && now - daemon.heartbeat_at <= HEARTBEAT_STALE_MS && isPidAlive(daemon.pid);
  const tokenRejected = daemonRunning && daemon?.api_status === 'token-rejected';
  const leads: ExplainedLead[] = [];
  if (ids.length === 0) return { phone_number: phone, daemon_running: daemonRunning, leads };
  const rows = await db.selectFrom('leads').selectAll().where('id', 'in', ids).orderBy('id').execute();
  const campaignRows = new Map((await db.selectFrom('campaigns').selectAll().execute()).map((c) => [c.id, c]));
  const live = await db.selectFrom('attempts').selectAll().where('state', 'in', LIVE_ATTEMPT_STATES_SQL).execute();
  for (const lead of rows) {
    const row = campaignRows.get(lead.campaign_id);
    if (!row) continue;
    const campaign = runtimeCampaign(row);
    // The primary, then the secondary numbers in order: index = contact_position.
    const secondary = await db.selectFrom('lead_contacts').select('phone_number').where('lead_id', '=', lead.id).where('position', '>=', 1).orderBy('position').execute();
    const contacts = [lead.phone_number, ...secondary.map((c) => c.phone_number)];
    const attempts = await db.selectFrom('attempts').selectAll().where('lead_id', '=', lead.id).orderBy('id').execute();
    const phone = contacts[lead.contact_position] ?? lead.phone_number;
    const person = campaign.person(phone, lead.timezone);
    const why = await reason(db, { lead, row, campaign, contacts, live, now, daemonRunning, tokenRejected, person });
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
    });
  }
  return { phone_number: phone, daemon_running: daemonRunning, leads };
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
  contacts: string[];
  live: AttemptRow[];
  now: number;
  daemonRunning: boolean;
  tokenRejected: boolean;
  person: PersonWindow;
}

interface Reason {
  code: string;
  message: string;
  at: number | null;
}

async function reason(db: Kysely<Database>, x: ReasonInput): Promise<Reason> {
  const { lead, campaign, now } = x;
  const zone = campaign.timezone;
  const when = (at: number): string => `${iso(at, zone)} (${formatIn(at - now)})`;
  switch (lead.state) {
    case 'completed':
      return { code: 'completed', message: 'completed: a call reached the person; it will not be called again', at: null };
    case 'reached-max-retries':
      return { code: 'reached-max-retries', message: `not called again: ${lead.state_reason ?? 'every attempt is used up'}`, at: null };
    case 'invalid':
      return { code: 'invalid', message: `invalid: ${lead.state_reason ?? 'the number cannot be called'}`, at: null };
    case 'suppressed':
      // An opt-out says so in the reason ("opted out of calls"); the list row says where from.
      return { code: 'suppressed', message: `on the do-not-call (suppression) list${lead.state_reason && lead.state_reason !== 'on the suppression list' ? ` (${lead.state_reason})` : ''}: never dialled`, at: null };
    case 'calling': {
      const mine = x.live.find((a) => a.lead_id === lead.id);
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
  }
  const phone = x.contacts[lead.contact_position] ?? lead.phone_number;
  if (x.row.problem) return { code: 'campaign-problem', message: `campaign "${x.row.name}" cannot dial: ${x.row.problem}`, at: null };
  if (x.row.state !== 'running') return { code: `campaign-${x.row.state}`, message: `campaign "${x.row.name}" is ${x.row.state}; "campaignd campaign resume ${x.row.name}" continues it`, at: null };
  const onList = await db.selectFrom('suppressions').select('phone_number').where('phone_number', '=', phone).executeTakeFirst();
  if (onList) return { code: 'suppressed', message: `${phone} is on the suppression list: it will be marked suppressed, never dialled`, at: null };
  const person = x.person;
  const due = Math.max(lead.next_due_at ?? now, now);
  const opening = person.nextOpening(due);
  const zoneNote = zoneText(person, zone);
  if (lead.next_due_at !== null && lead.next_due_at > now) {
    const prefix = lead.state === 'retry-scheduled' ? `retry of contact ${lead.contact_position} (${phone}) is due` : 'due';
    // A cap that still holds the number when the retry falls due is named with its end.
    const later = await capHold(db, person.caps, phone, lead.next_due_at);
    if (later && later.until > lead.next_due_at) {
      const next = person.nextOpening(later.until) ?? later.until;
      return {
        code: 'attempt-cap',
        message: `${prefix} at ${when(lead.next_due_at)}, but ${capText(later)}; the number may be called again at ${when(later.until)}${zoneNote}`,
        at: next,
      };
    }
    const extra = opening !== null && opening > lead.next_due_at ? `; the window then opens at ${when(opening)}` : '';
    return { code: 'retry-not-due', message: `${prefix} at ${when(lead.next_due_at)}${lead.state_reason ? ` (${lead.state_reason})` : ''}${extra}${zoneNote}`, at: opening ?? lead.next_due_at };
  }
  if (!isOpen(campaign.window, now)) {
    const next = nextOpening(campaign.window, now);
    return { code: 'window-closed', message: next === null ? 'the calling window never opens (check allowed_days and blackout_dates)' : `the calling window is closed until ${when(opening ?? next)}`, at: opening ?? next };
  }
  const closed = person.closedBy(now);
  if (closed) {
    const code = closed.label.startsWith('lead_local_hours') ? 'lead-local-hours' : 'calling-rule';
    return { code, message: `outside the person's hours: ${closed.label}, until ${opening === null ? 'never' : when(opening)}${zoneNote}`, at: opening };
  }
  const hold = await capHold(db, person.caps, phone, now);
  if (hold) {
    const next = person.nextOpening(hold.until) ?? hold.until;
    return { code: 'attempt-cap', message: `${capText(hold)}; the number may be called again at ${when(hold.until)}`, at: next };
  }
  if (!x.daemonRunning) return { code: 'daemon-down', message: 'due now, but no daemon is running ("campaignd run")', at: now };
  if (x.tokenRejected) return { code: 'token-rejected', message: 'due now, but the service rejects the API token: dialing is stopped until it works', at: now };
  const other = x.live.find((a) => a.phone_number === phone);
  if (other) return { code: 'number-busy', message: `another call to ${phone} is live (attempt ${other.id}); this lead waits for it to end`, at: null };
  const liveHere = x.live.filter((a) => a.campaign_id === x.row.id).length;
  if (liveHere >= campaign.config.maxCallsInParallel) {
    return { code: 'at-limit', message: `campaign at its live-call limit (${liveHere}/${campaign.config.maxCallsInParallel}); called when a slot frees`, at: null };
  }
  const ahead = await db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('campaign_id', '=', x.row.id)
    .where('state', 'in', ['pending', 'retry-scheduled'])
    .where((eb) => eb.or([eb('next_due_at', '<', lead.next_due_at ?? now), eb.and([eb('next_due_at', '=', lead.next_due_at ?? now), eb('id', '<', lead.id)])]))
    .executeTakeFirst();
  const n = Number(ahead?.n ?? 0);
  return { code: 'due', message: n === 0 ? 'due now: next in line for a free slot' : `due now: ${n} lead(s) ahead of it in the queue`, at: now };
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

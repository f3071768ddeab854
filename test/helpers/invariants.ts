// The dialing rules of docs/design.md §3, checked against the SIMULATOR's own record
// of the calls it placed (creation instant and timeline), never against campaignd's
// database alone: the database is what is being tested. Each check throws an Error
// naming the rule, the number and the instants involved. Reused by issue 6's harness.
import type { Kysely } from 'kysely';
import type { CampaignConfig, RetryableClass } from '../../src/config/types.js';
import type { SimCall } from '../../src/simulator/types.js';
import { collectStatus } from '../../src/status/collect.js';
import type { Database, LeadState } from '../../src/store/types.js';
import { zonesForNumber } from '../../src/phone-zones/lookup.js';
import { insideWallWindow } from './wall-clock.js';

/** The part of a simulator call the checks read. */
export type ObservedCall = Pick<SimCall, 'id' | 'client_phone_number' | 'createdAt' | 'finishedAt' | 'status' | 'answered_by'>;

/** A lead as the test created it: its contacts in order (primary first). */
export interface ExpectedLead {
  contacts: string[];
  timezone?: string;
}

const SUCCESS_STATUSES = new Set(['completed', 'ended', 'ended_by_customer', 'ended_by_assistant']);
const IN_PROGRESS = new Set(['initiated', 'ringing', 'in-progress']);

/** Rule 5, written out again here (independently of the engine): the class of a final call. */
export function callClass(status: string, answeredBy: string | null): 'success' | 'voicemail' | RetryableClass | 'in-progress' | 'other' {
  if (IN_PROGRESS.has(status)) return 'in-progress';
  if (SUCCESS_STATUSES.has(status)) return answeredBy === 'machine' ? 'voicemail' : 'success';
  if (status === 'busy' || status === 'no-answer' || status === 'failed' || status === 'voicemail') return status;
  return 'other';
}

const iso = (t: number): string => new Date(t).toISOString();
const end = (c: ObservedCall): number => c.finishedAt ?? Number.POSITIVE_INFINITY;

/** Most calls in progress at any one instant; a call is in progress over [createdAt, finishedAt). */
export function maxConcurrent(calls: readonly ObservedCall[]): { max: number; at: number | null } {
  const events: [number, number][] = [];
  for (const c of calls) {
    events.push([c.createdAt, 1]);
    if (c.finishedAt !== null) events.push([c.finishedAt, -1]);
  }
  // At equal instants an end comes before a start: a slot freed at t may be refilled at t.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let max = 0;
  let at: number | null = null;
  for (const [t, d] of events) {
    n += d;
    if (n > max) {
      max = n;
      at = t;
    }
  }
  return { max, at };
}

/** Calls grouped by the number called, each list in creation order. */
export function callsByNumber(calls: readonly ObservedCall[]): Map<string, ObservedCall[]> {
  const map = new Map<string, ObservedCall[]>();
  for (const c of [...calls].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)) {
    const list = map.get(c.client_phone_number) ?? [];
    list.push(c);
    map.set(c.client_phone_number, list);
  }
  return map;
}

/** Rule 3: no two calls to one number are in progress at the same time. */
export function assertNoOverlapPerNumber(calls: readonly ObservedCall[]): void {
  for (const [phone, list] of callsByNumber(calls)) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const next = list[i]!;
      if (next.createdAt < end(prev)) {
        throw new Error(`rule 3: calls ${prev.id} and ${next.id} to ${phone} overlap (second created ${iso(next.createdAt)} before the first ended ${prev.finishedAt === null ? 'never' : iso(prev.finishedAt)})`);
      }
    }
  }
}

/** Rule 2: calls in progress at once never exceed `limit` (`label` names the campaign or account). */
export function assertParallelLimit(calls: readonly ObservedCall[], limit: number, label: string): void {
  const { max, at } = maxConcurrent(calls);
  if (max > limit) throw new Error(`rule 2: ${max} calls of ${label} in progress at ${at === null ? '?' : iso(at)}, limit ${limit}`);
}

/** Rule 4: at most 1 + max_retries calls to each contact number. */
export function assertAttemptBudget(calls: readonly ObservedCall[], contacts: readonly string[], maxRetries: number): void {
  const byNumber = callsByNumber(calls);
  for (const phone of contacts) {
    const n = byNumber.get(phone)?.length ?? 0;
    if (n > 1 + maxRetries) throw new Error(`rule 4: ${phone} was called ${n} times, budget 1 + ${maxRetries}`);
  }
}

/** Rule 4: the next call to a number starts at least `retryIntervalSeconds` after the previous one ended. */
export function assertRetryGap(calls: readonly ObservedCall[], retryIntervalSeconds: number): void {
  for (const [phone, list] of callsByNumber(calls)) {
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const next = list[i]!;
      const gap = next.createdAt - end(prev);
      if (gap < retryIntervalSeconds * 1000) {
        throw new Error(`rule 4: call ${next.id} to ${phone} came ${gap / 1000} s after call ${prev.id} ended; retry_interval is ${retryIntervalSeconds} s`);
      }
    }
  }
}

/**
 * Rule 1: every call was created while the campaign's window (and the lead's own hours) was
 * open. Judged on the simulator's record of each call (its creation time) against the
 * campaign's settings, by wall-clock fields from Intl (wall-clock.ts), not by the daemon's
 * own window code, so that the check and the code under test cannot share a mistake.
 */
export function assertInsideWindow(calls: readonly ObservedCall[], campaign: CampaignConfig, leadZones: ReadonlyMap<string, string | undefined> = new Map()): void {
  const window = { timezone: campaign.timezone ?? 'UTC', days: campaign.allowedDays, start: campaign.allowedHoursStart, end: campaign.allowedHoursEnd, blackoutDates: campaign.blackoutDates };
  for (const c of calls) {
    if (!insideWallWindow(window, c.createdAt)) throw new Error(`rule 1: call ${c.id} to ${c.client_phone_number} created at ${iso(c.createdAt)} while the window was closed`);
    if (campaign.leadLocalHours) {
      // Who may be called (docs/design.md §11): without a zone column, every zone of the number (else the campaign's).
      const own = leadZones.get(c.client_phone_number);
      const byNumber = zonesForNumber(c.client_phone_number);
      const zones = own ? [own] : byNumber.length > 0 ? byNumber : [campaign.timezone ?? 'UTC'];
      for (const zone of zones) {
        const personal = { timezone: zone, days: [1, 2, 3, 4, 5, 6, 7], start: campaign.leadLocalHours.start, end: campaign.leadLocalHours.end };
        if (!insideWallWindow(personal, c.createdAt)) throw new Error(`rule 1: call ${c.id} to ${c.client_phone_number} created at ${iso(c.createdAt)} outside the person's local hours in ${zone}`);
      }
    }
  }
}

/** No call was created in [from, to) (a pause, a closed window). */
export function assertNoCallsBetween(calls: readonly ObservedCall[], from: number, to: number, why: string): void {
  const bad = calls.find((c) => c.createdAt >= from && c.createdAt < to);
  if (bad) throw new Error(`${why}: call ${bad.id} to ${bad.client_phone_number} created at ${iso(bad.createdAt)}, inside [${iso(from)}, ${iso(to)})`);
}

/**
 * Rules 4 and 5 lead by lead, from the calls alone: contacts are tried in order, a
 * contact is called again only after a retryable outcome listed in retry_on and within
 * its budget, the first success completes the lead and nothing follows it. Numbers in
 * `rejected` are refused by the service (they get no call). Returns the final state
 * each lead must have, keyed by its primary number.
 */
export function expectedLeadStates(
  calls: readonly ObservedCall[],
  leads: readonly ExpectedLead[],
  campaign: Pick<CampaignConfig, 'maxRetries' | 'retryOn'>,
  rejected: ReadonlySet<string> = new Set(),
): Map<string, LeadState> {
  const byNumber = callsByNumber(calls);
  const out = new Map<string, LeadState>();
  const retryOn = new Set<string>(campaign.retryOn);
  for (const lead of leads) {
    const primary = lead.contacts[0]!;
    let state: LeadState | null = null;
    let lastEnd = Number.NEGATIVE_INFINITY;
    for (const [k, phone] of lead.contacts.entries()) {
      const list = byNumber.get(phone) ?? [];
      if (state !== null) {
        if (list.length > 0) throw new Error(`lead ${primary}: contact ${k} (${phone}) was called after the lead was already ${state}`);
        continue;
      }
      if (rejected.has(phone)) {
        if (list.length > 0) throw new Error(`lead ${primary}: rejected number ${phone} was called`);
        if (k === lead.contacts.length - 1) state = 'invalid';
        continue;
      }
      if (list.length === 0) throw new Error(`lead ${primary}: contact ${k} (${phone}) was never called`);
      const first = list[0]!;
      if (first.createdAt < lastEnd) throw new Error(`lead ${primary}: contact ${k} (${phone}) called at ${iso(first.createdAt)} before contact ${k - 1} was done`);
      for (const [j, call] of list.entries()) {
        const cls = callClass(call.status, call.answered_by);
        if (cls === 'in-progress') throw new Error(`lead ${primary}: call ${call.id} to ${phone} is still ${call.status}`);
        const last = j === list.length - 1;
        const retryable = retryOn.has(cls) && j < campaign.maxRetries;
        if (cls === 'success') {
          if (!last) throw new Error(`lead ${primary}: ${phone} called again after call ${call.id} succeeded`);
          state = 'completed';
        } else if (retryable && last) {
          throw new Error(`lead ${primary}: call ${call.id} to ${phone} ended ${cls} (in retry_on, try ${j + 1} of ${1 + campaign.maxRetries}) but was not retried`);
        } else if (!retryable && !last) {
          throw new Error(`lead ${primary}: ${phone} called again after call ${call.id} ended ${cls}, which is final here`);
        }
      }
      lastEnd = end(list[list.length - 1]!);
    }
    out.set(primary, state ?? 'reached-max-retries');
  }
  return out;
}

/** Lead states in the database, keyed by primary number. */
export async function leadStatesByPhone(db: Kysely<Database>, campaignId: number): Promise<Map<string, LeadState>> {
  const rows = await db.selectFrom('leads').select(['phone_number', 'state']).where('campaign_id', '=', campaignId).execute();
  return new Map(rows.map((r) => [r.phone_number, r.state]));
}

/**
 * Every lead is final in the database as the calls say it must be, and `status`
 * (collectStatus) reports the same counts with nothing active or live.
 */
export async function assertFinalStates(
  db: Kysely<Database>,
  campaign: { id: number; name: string },
  expected: ReadonlyMap<string, LeadState>,
  now: number,
): Promise<void> {
  const actual = await leadStatesByPhone(db, campaign.id);
  for (const [phone, state] of expected) {
    if (actual.get(phone) !== state) throw new Error(`lead ${phone} of ${campaign.name}: database says ${actual.get(phone) ?? 'missing'}, the calls say ${state}`);
  }
  const report = await collectStatus(db, { now, campaign: campaign.name, version: 'test', isPidAlive: () => true });
  const c = report.campaigns[0];
  if (!c) throw new Error(`status shows no campaign ${campaign.name}`);
  const count = (s: LeadState): number => [...expected.values()].filter((v) => v === s).length;
  const want = {
    total: expected.size,
    pending: 0,
    calling: 0,
    retry_scheduled: 0,
    completed: count('completed'),
    reached_max_retries: count('reached-max-retries'),
    invalid: count('invalid'),
    suppressed: count('suppressed'),
    cancelled: count('cancelled'),
  };
  if (JSON.stringify(c.leads) !== JSON.stringify({ ...c.leads, ...want }) || c.live_calls !== 0) {
    throw new Error(`status of ${campaign.name}: leads ${JSON.stringify(c.leads)}, live ${c.live_calls}; expected ${JSON.stringify(want)}, live 0`);
  }
}

/** One campaign's part in `assertAllRules`. */
export interface CampaignUnderTest {
  id: number;
  name: string;
  config: CampaignConfig;
  leads: ExpectedLead[];
  rejected?: ReadonlySet<string>;
}

/**
 * Every rule of (2) at once: per number no overlap; per campaign the parallel limit,
 * the attempt budget, the retry gap, the window and the final lead states with
 * matching status counts; over all campaigns the account cap when set.
 */
export async function assertAllRules(
  db: Kysely<Database>,
  calls: readonly ObservedCall[],
  campaigns: readonly CampaignUnderTest[],
  opts: { now: number; accountMaxCalls?: number },
): Promise<void> {
  assertNoOverlapPerNumber(calls);
  if (opts.accountMaxCalls !== undefined) assertParallelLimit(calls, opts.accountMaxCalls, 'the account');
  const known = new Set<string>();
  for (const c of campaigns) {
    const numbers = new Set(c.leads.flatMap((l) => l.contacts));
    for (const n of numbers) known.add(n);
    const own = calls.filter((call) => numbers.has(call.client_phone_number));
    assertParallelLimit(own, c.config.maxCallsInParallel, `campaign ${c.name}`);
    assertAttemptBudget(own, [...numbers], c.config.maxRetries);
    assertRetryGap(own, c.config.retryIntervalSeconds);
    const zones = new Map(c.leads.flatMap((l) => l.contacts.map((p) => [p, l.timezone] as const)));
    assertInsideWindow(own, c.config, zones);
    const expected = expectedLeadStates(own, c.leads, c.config, c.rejected);
    await assertFinalStates(db, c, expected, opts.now);
  }
  const stray = calls.find((c) => !known.has(c.client_phone_number));
  if (stray) throw new Error(`call ${stray.id} to ${stray.client_phone_number}, a number of no lead`);
}

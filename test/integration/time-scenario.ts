// Runs campaigns on the time harness (time-fixture.ts) and checks what the simulator
// recorded: every call inside its windows (window.ts and an independent luxon reading),
// no overlap per number, retry gaps and parallel limits, and every stretch where a
// campaign could call for some lead zone was used (a call inside it).
import { expect } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import type { OutcomeName, SimCall } from '../../src/simulator/types.js';
import { isOpen, leadLocalWindow, windowFromCampaign, type WindowSpec } from '../../src/time/window.js';
import { assertNoOverlapPerNumber, assertParallelLimit, assertRetryGap } from '../helpers/invariants.js';
import { phoneNumbers, startStack, type CampaignSpec, type Stack } from '../helpers/stack.js';
import { driveUntil, freezeAroundDiskSync, freezeAroundMakeCall, HarnessClock, type FreezingClient } from './time-clock.js';
import { assertCallsInsideWindows } from './time-fixture.js';

/** One campaign of a harness run: its settings and how many leads in which zones. */
export interface TimedCampaign {
  name: string;
  settings: NonNullable<CampaignSpec['settings']>;
  /** Lead zones, `leadsPerZone` leads each (undefined: no zone of their own). */
  leadZones: (string | undefined)[];
  leadsPerZone?: number;
}

export interface TimedRun {
  from: number;
  to: number;
  factor: number;
  realTimeoutMs: number;
  campaigns: TimedCampaign[];
  outcomes?: Partial<Record<OutcomeName, number>>;
  onProgress?: (now: number) => void;
}

/** A stretch of simulated time in which a campaign could call leads of `zone`. */
export interface OpenStretch {
  campaign: string;
  zone: string | undefined;
  from: number;
  to: number;
  calls: number;
  /** Simulated ms from the opening to the first call in it (null: none). */
  firstCallAfterMs: number | null;
}

export interface TimedResult {
  calls: SimCall[];
  byCampaign: Map<string, SimCall[]>;
  configs: Map<string, CampaignConfig>;
  stretches: OpenStretch[];
  skippedMs: number;
  /** Real ms of the whole run, and of the part where simulated time ran. */
  realMs: number;
  driveMs: number;
  stalledMs: number;
  /** Leads that left play (none should: no call succeeds, the retry budget is endless). */
  finalLeads: string[];
  frozenMs: number;
  /** Service requests the daemon's client made. */
  requests: number;
}

/** Runs the campaigns from `from` to `to` of simulated time and returns what the simulator recorded. */
export async function runTimed(run: TimedRun): Promise<TimedResult> {
  const clock = new HarnessClock(run.factor, run.from);
  let freezing: FreezingClient | null = null;
  let offset = 0;
  const zoneOf = new Map<string, string | undefined>();
  const specs: CampaignSpec[] = run.campaigns.map((c) => {
    const leads = c.leadZones.flatMap((timezone) => {
      const numbers = leadNumbers(c.leadsPerZone ?? 3, offset, timezone);
      offset += numbers.length;
      return numbers.map((phone) => {
        zoneOf.set(phone, timezone);
        return { phone, ...(timezone ? { timezone } : {}) };
      });
    });
    return {
      name: c.name,
      settings: { maxCallsInParallel: 2, maxRetries: 1_000_000, retryIntervalSeconds: 120, retryOn: ['busy', 'no-answer', 'failed', 'voicemail'], markCompleteWhenNoLeads: false, ...c.settings },
      leads,
    };
  });
  const started = Date.now();
  let stack: Stack | null = null;
  try {
    // Setting up (migrations, import, the engine's first requests) takes real time that
    // must not become simulated hours before the first look.
    clock.freeze();
    stack = await startStack({
      clock,
      campaigns: specs,
      outcomes: run.outcomes ?? { human: 0, voicemail: 0, busy: 1, 'no-answer': 2, failed: 1 },
      wrapClient: (inner) => {
        freezing = freezeAroundMakeCall(inner, clock);
        return freezing.client;
      },
      startEngine: false,
    });
    // The longest maximum duration the service allows (20 min): the engine closes a call it
    // has not heard the end of after that + 5 min, and on a loaded machine a webhook's real
    // milliseconds are simulated minutes at these speeds.
    await stack.client.updateAssistant(stack.assistantId, { max_call_duration: 1200 });
    freezeAroundDiskSync(stack.db, clock);
    await stack.startEngine();
    clock.thaw();
    const s = stack;
    const configs = s.campaigns.map((c) => c.config);
    const driveStarted = Date.now();
    await driveUntil({
      clock,
      inFlight: () => freezing?.inFlight() ?? 0,
      campaigns: configs,
      calls: () => s.sim.state.calls.values(),
      end: run.to,
      realTimeoutMs: run.realTimeoutMs,
      ...(run.onProgress ? { onProgress: run.onProgress } : {}),
    });
    const driveMs = Date.now() - driveStarted;
    await s.stopEngine(5_000);
    // Nothing ever succeeds and the budget is endless: every lead must still be in play.
    const finalLeads = (
      await s.db.selectFrom('leads').select(['phone_number', 'state', 'state_reason', 'updated_at']).where('state', 'not in', ['pending', 'calling', 'retry-scheduled']).execute()
    ).map((l) => `${l.phone_number} ${l.state} at ${new Date(l.updated_at).toISOString()}: ${l.state_reason ?? ''}`);
    if (finalLeads.length > 0) console.log(await describeNumber(s, finalLeads[0]!.split(' ')[0]!));
    const calls = s.simCalls();
    const byCampaign = new Map<string, SimCall[]>();
    for (const c of s.campaigns) {
      const own = new Set(c.leads.flatMap((l) => l.contacts));
      byCampaign.set(c.name, calls.filter((call) => own.has(call.client_phone_number)));
    }
    const configMap = new Map(s.campaigns.map((c) => [c.name, c.config]));
    const stretches = run.campaigns.flatMap((c) => {
      const config = configMap.get(c.name)!;
      return [...new Set(c.leadZones)].flatMap((zone) =>
        openStretches(config, zone, run.from, run.to).map((st) => {
          const inside = (byCampaign.get(c.name) ?? []).filter((call) => zoneOf.get(call.client_phone_number) === zone && call.createdAt >= st.from && call.createdAt < st.to);
          const first = inside.reduce<number | null>((m, call) => (m === null || call.createdAt < m ? call.createdAt : m), null);
          return { campaign: c.name, zone, ...st, calls: inside.length, firstCallAfterMs: first === null ? null : first - st.from };
        }),
      );
    });
    return { calls, byCampaign, configs: configMap, stretches, skippedMs: clock.skippedMs, realMs: Date.now() - started, driveMs, finalLeads, stalledMs: clock.stalledMs, frozenMs: (freezing as FreezingClient | null)?.frozenMs() ?? 0, requests: s.requests.length };
  } finally {
    await stack?.close();
    clock.dispose();
  }
}

const MINUTE = 60_000;

/** The last attempts and simulator calls of one number, for a failure message. */
async function describeNumber(s: Stack, phone: string): Promise<string> {
  const iso = (t: number | null): string => (t === null ? '-' : new Date(t).toISOString());
  const attempts = await s.db.selectFrom('attempts').selectAll().where('phone_number', '=', phone).orderBy('id', 'desc').limit(3).execute();
  const calls = s.simCalls().filter((c) => c.client_phone_number === phone).slice(-3);
  return [
    `number ${phone}:`,
    ...attempts.map((a) => `  attempt ${a.id} ${a.state} ${a.outcome ?? ''}/${a.outcome_source ?? ''} call ${a.call_id ?? '-'} created ${iso(a.created_at)} sent ${iso(a.sent_at)} ended ${iso(a.ended_at)} ${a.detail ?? ''}`),
    ...calls.map((c) => `  sim call ${c.id} ${c.status} ${c.timeline.map((t) => `${t.status}@${iso(t.at)}`).join(' ')}`),
  ].join('\n');
}

/** The windows a lead in `zone` is called in (the campaign's, and its own hours when set). */
export function leadWindows(c: CampaignConfig, zone: string | undefined): WindowSpec[] {
  const campaign = windowFromCampaign(c, c.timezone ?? 'UTC');
  return c.leadLocalHours ? [campaign, leadLocalWindow(c.leadLocalHours, zone ?? c.timezone ?? 'UTC')] : [campaign];
}

/** Stretches of [from, to) where every window of a lead in `zone` is open, sampled each minute. */
export function openStretches(c: CampaignConfig, zone: string | undefined, from: number, to: number): { from: number; to: number }[] {
  const windows = leadWindows(c, zone);
  const out: { from: number; to: number }[] = [];
  let openSince: number | null = null;
  for (let t = Math.ceil(from / MINUTE) * MINUTE; t < to; t += MINUTE) {
    const open = windows.every((w) => isOpen(w, t));
    if (open && openSince === null) openSince = t;
    if (!open && openSince !== null) {
      out.push({ from: openSince, to: t });
      openSince = null;
    }
  }
  if (openSince !== null) out.push({ from: openSince, to });
  return out;
}

/**
 * The checks every harness run makes: rule 1 for every call, no overlap per number,
 * the retry gap and the parallel limit per campaign, and every stretch of at least
 * `minStretchMs` (ending before the run did) holds a call.
 */
export function assertTimedRun(result: TimedResult, leadZones: ReadonlyMap<string, string>, minStretchMs = 15 * MINUTE): void {
  expect(result.finalLeads).toEqual([]);
  assertNoOverlapPerNumber(result.calls);
  for (const [name, calls] of result.byCampaign) {
    const config = result.configs.get(name)!;
    assertCallsInsideWindows(calls, config, leadZones);
    assertRetryGap(calls, config.retryIntervalSeconds);
    assertParallelLimit(calls, config.maxCallsInParallel, `campaign ${name}`);
  }
  const unused = result.stretches.filter((s) => s.to - s.from >= minStretchMs && s.calls === 0);
  expect(unused.map((s) => `${s.campaign} (${s.zone ?? 'campaign zone'}) ${new Date(s.from).toISOString()}–${new Date(s.to).toISOString()}`)).toEqual([]);
}

/**
 * Numbers of a run's leads. A lead without a zone column is judged in its number's zones
 * (docs/design.md §11); +800 numbers map to none, so those leads are judged in the campaign's
 * zone, as the oracle here does.
 */
function leadNumbers(count: number, offset: number, zone: string | undefined): string[] {
  return phoneNumbers(count, offset).map((p) => (zone ? p : p.replace('+1202555', '+8005550')));
}

/** Lead zone of every lead number of a run (numbers are assigned in campaign, zone order). */
export function leadZonesOf(run: Pick<TimedRun, 'campaigns'>): Map<string, string> {
  const out = new Map<string, string>();
  let offset = 0;
  for (const c of run.campaigns) {
    for (const zone of c.leadZones) {
      const numbers = leadNumbers(c.leadsPerZone ?? 3, offset, zone);
      offset += numbers.length;
      if (zone) for (const n of numbers) out.set(n, zone);
    }
  }
  return out;
}

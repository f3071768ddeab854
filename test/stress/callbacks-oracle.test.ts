// Callbacks the person asks for (README, "Callbacks"), judged by an independent oracle (slow
// profile, `npm run test:slow`; on SQLite and on PostgreSQL). About 1,100 people in seven zones
// (Berlin, New York, Chicago, Los Angeles, Sydney, Kolkata's half hour), called by three
// campaigns with their own windows and `lead_local_hours`, answer and ask to be called back
// in English or German ("tomorrow at 3 pm", "in 2 hours", "next Monday at 10:30", ISO 8601
// with and without an offset, "morgen um 15 Uhr", "übermorgen um 9:30"), often for a time
// outside the rules ("tonight at 11 pm", "tomorrow at 6 am", a Sunday in Berlin), sometimes
// for one that cannot be read ("whenever", "nach dem Urlaub") or lies beyond the horizon.
// On SQLite, ten days from Friday 23 October 2026 run through the engine sped up 6,000 times,
// across the European (25 October) and the US (1 November) DST changes; on PostgreSQL half the
// people over three and a half days across the European change, 1,000 times (ON_POSTGRES). The drive jumps
// where nothing is due (who-year-drive.ts). Every callback asks again, so a lead reaches
// max_per_lead; callbacks asked for after the run's end are not judged.
//
// The judge (test/helpers/callbacks-oracle.ts) imports nothing of src/engine, src/time or
// src/rules: it reads every phrase itself with chrono-node and luxon, in the person's zone, from
// the simulator's own record (GET /__sim/conversations), and checks that every readable
// callback within the horizon and max_per_lead was placed exactly once, at the asked moment or
// the first allowed moment after it (within TOLERANCE_MS, or later only behind a queue of its
// campaign's calls: BUSY_GAP_MS; never before), never outside the rules,
// and that nothing was placed for the others. The campaigns have no retries and everybody
// answers, so a second call to a number can only be a callback.
import { describe, expect, it } from 'vitest';
import { parseCampaignFile } from '../../src/config/campaign.js';
import type { CampaignConfig } from '../../src/config/types.js';
import { openStore } from '../../src/store/open-store.js';
import { judgeCallbacks, type OracleCall, type OracleLead, type OracleSettings } from '../helpers/callbacks-oracle.js';
import { startStack, type LeadSpec } from '../helpers/stack.js';
import { testDialect } from '../helpers/test-store.js';
import { freezeAroundMakeCall, HarnessClock, type FreezingClient } from '../integration/time-clock.js';
import { drivenRun, driveYear, stackDrive, type LeadSeen } from './who-year-drive.js';

/** Friday 23 October 2026, 08:00 in Berlin (CEST): two days before Europe leaves summer time. */
const FROM = Date.UTC(2026, 9, 23, 6, 0);
/**
 * PostgreSQL answers each statement later than SQLite, and on a clock sped up 6,000 times a
 * second of the engine's work is 100 simulated minutes: there the run is slower and shorter
 * (the European change only) with half the people, so that it fits the slow suite's budget.
 */
const ON_POSTGRES = testDialect === 'postgres';
/** SQLite: Monday 2 November, 19:00 in New York, the first working day after the US change. PostgreSQL: Monday 26 October, 19:00 in Berlin. */
const TO = ON_POSTGRES ? Date.UTC(2026, 9, 26, 18, 0) : Date.UTC(2026, 10, 3, 0, 0);
/** Simulated ms per real ms (PostgreSQL at 2,000 times failed once in CI beside the year of calling rules: a lull past BUSY_GAP_MS). */
const SPEED = ON_POSTGRES ? 1_000 : 6_000;
/** The share of each group of people called. */
const SHARE = ON_POSTGRES ? 0.5 : 1;
/** How long after its first allowed moment a callback may start: the engine's pace with many due at one opening. */
const TOLERANCE_MS = 10 * 60_000;
/**
 * Later than that, a callback passes only behind a queue: its campaign placed a call at least
 * this often while it waited, and no fresh lead went ahead of it. At 6,000 times real speed a
 * pass of the dial loop that takes 100 ms on a loaded PostgreSQL is 10 simulated minutes, so a
 * burst of callbacks due at one opening stretches over simulated hours while the engine works
 * through it at full pace; an engine that ignored a due callback leaves its campaign idle.
 */
const BUSY_GAP_MS = 30 * 60_000;
const CALLBACKS = { variable: 'callback_at', max_per_lead: 2, horizon_days: 30 };

interface Group {
  zone: string;
  count: number;
  /** The number of the i-th person of the group. */
  phone: (i: number) => string;
  /** The conversation of the i-th person: a callback in their language, or the mix (which mostly asks none). */
  scenario: (i: number) => string;
}

interface CampaignPlan {
  name: string;
  timezone: string;
  days: string[];
  start: string;
  end: string;
  groups: Group[];
}

const WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const pick = (i: number, a: string, b: string, c: string) => (i % 10 < 5 ? a : i % 10 < 8 ? b : c);
const PLANS: CampaignPlan[] = [
  {
    name: 'berlin',
    timezone: 'Europe/Berlin',
    days: WEEK.slice(0, 6),
    start: '09:00:00',
    end: '19:00:00',
    groups: [{ zone: 'Europe/Berlin', count: 400, phone: (i) => `+4930${20_000_000 + i}`, scenario: (i) => pick(i, 'callback-de', 'callback-en', 'mix') }],
  },
  {
    name: 'new-york',
    timezone: 'America/New_York',
    days: WEEK,
    start: '08:00:00',
    end: '20:00:00',
    groups: [
      { zone: 'America/New_York', count: 150, phone: (i) => `+1212555${String(1000 + i).padStart(4, '0')}`, scenario: (i) => pick(i, 'callback-en', 'callback-en', 'mix') },
      { zone: 'America/Chicago', count: 125, phone: (i) => `+1312555${String(1000 + i).padStart(4, '0')}`, scenario: (i) => pick(i, 'callback-en', 'callback-de', 'mix') },
      { zone: 'America/Los_Angeles', count: 125, phone: (i) => `+1213555${String(1000 + i).padStart(4, '0')}`, scenario: (i) => pick(i, 'callback-en', 'callback-en', 'mix') },
    ],
  },
  {
    name: 'sydney',
    timezone: 'Australia/Sydney',
    days: WEEK,
    start: '10:00:00',
    end: '18:00:00',
    groups: [
      { zone: 'Australia/Sydney', count: 150, phone: (i) => `+612${90_000_000 + i}`, scenario: (i) => pick(i, 'callback-en', 'callback-en', 'mix') },
      { zone: 'Asia/Kolkata', count: 150, phone: (i) => `+9133${20_000_000 + i}`, scenario: (i) => pick(i, 'callback-en', 'callback-en', 'mix') },
    ],
  },
];

/** The campaign file as a person would write it (README, "Callbacks"), read by campaignd's own config reader. */
function campaignYaml(p: CampaignPlan): string {
  return [
    `name: ${p.name}`,
    'assistant_id: 1',
    `timezone: ${p.timezone}`,
    `allowed_days: [${p.days.join(', ')}]`,
    `allowed_hours_start_time: "${p.start}"`,
    `allowed_hours_end_time: "${p.end}"`,
    'lead_local_hours: { start: "09:00:00", end: "20:00:00" }',
    'max_calls_in_parallel: 40',
    'max_retries: 0',
    'retry_interval: 60',
    'mark_complete_when_no_leads: false',
    'status: running',
    'leads: { file: leads.csv }',
    `callbacks: { variable: ${CALLBACKS.variable}, max_per_lead: ${CALLBACKS.max_per_lead}, horizon_days: ${CALLBACKS.horizon_days} }`,
    '',
  ].join('\n');
}

function campaignSettings(p: CampaignPlan): Partial<Omit<CampaignConfig, 'name' | 'file' | 'assistantId'>> {
  const { campaign, problems } = parseCampaignFile(`/test/campaigns/${p.name}.yaml`, campaignYaml(p));
  const errors = problems.filter((x) => x.severity === 'error');
  if (!campaign || errors.length > 0) throw new Error(`campaign ${p.name} does not load (callbacks: are they in this build?): ${JSON.stringify(errors)}`);
  const { name: _n, file: _f, assistantId: _a, ...settings } = campaign;
  return settings;
}

const seconds = (hhmmss: string) => hhmmss.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
const FINAL = new Set(['completed', 'invalid', 'suppressed', 'cancelled', 'moved', 'reached-max-retries']);

describe(`callbacks the person asks for, judged by an independent oracle (${testDialect})`, () => {
  const run = drivenRun();

  it('ten days in seven zones across two DST changes: each readable callback placed once, at the asked or first allowed moment; none for the rest', async () => {
    const people = PLANS.flatMap((p) => p.groups.flatMap((g) => Array.from({ length: Math.round(g.count * SHARE) }, (_, i) => ({ plan: p, zone: g.zone, phone: g.phone(i), scenario: g.scenario(i) }))));
    const c = new HarnessClock(SPEED, FROM);
    run.clock = c;
    c.freeze();
    let freezing: FreezingClient | null = null;
    run.stack = await startStack({
      clock: c,
      startEngine: false,
      seed: 24,
      accountMaxCalls: 200,
      campaigns: PLANS.map((p) => ({
        name: p.name,
        settings: campaignSettings(p),
        leads: people.filter((x) => x.plan === p).map((x): LeadSpec => ({ phone: x.phone, timezone: x.zone })),
      })),
      // Everybody answers: a second call to a number can only be a callback.
      outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
      wrapClient: (inner) => {
        freezing = freezeAroundMakeCall(inner, c);
        return freezing.client;
      },
    });
    const s = run.stack;
    for (const x of people) await s.control('/__sim/conversations', { phone_number: x.phone, scenario: x.scenario });
    run.reader = await openStore(s.dbFile);
    const rdb = run.reader.db;
    await s.startEngine();

    c.thaw();
    const started = Date.now();
    const drive = await driveYear({
      ...stackDrive(s, c, () => freezing, rdb),
      end: TO,
      spans: [],
      events: [],
      realTimeoutMs: 480_000,
      // A lead waits for a callback however the store names that state: not final, and due at an instant.
      waiting: (l: LeadSeen) => !FINAL.has(l.state) && l.state !== 'calling',
      // A success only a webhook reported is decided (and its callback scheduled) once the call list confirms it: no jump before.
      mayJump: async () =>
        (await rdb.selectFrom('attempts').select('id').where('state', '=', 'ended').where('outcome_source', '=', 'webhook').where('outcome', '=', 'success').limit(1).executeTakeFirst()) === undefined,
      onProgress: (now) => console.log(`callbacks-oracle (${testDialect}): simulated ${new Date(now).toISOString()}, ${s.sim.state.calls.size} calls`),
    });
    const realMs = Date.now() - started;
    await s.stopEngine(5_000);

    // The simulator's own record of every call: number, placed, ended, what was extracted.
    const res = await fetch(`${s.sim.url}/__sim/conversations`);
    const rows = ((await res.json()) as { calls: { call_id: number; phone_number: string; placed_at_ms: number; ended_at_ms: number | null; answered_by: string | null; extracted_variables: Record<string, unknown> }[] }).calls;
    const calls: OracleCall[] = rows.map((r) => ({ callId: r.call_id, phone: r.phone_number, placedAt: r.placed_at_ms, endedAt: r.ended_at_ms, answered: r.answered_by === 'human', extracted: r.extracted_variables }));
    const leads: OracleLead[] = people.map((x) => ({
      phone: x.phone,
      zone: x.zone,
      window: { timezone: x.plan.timezone, days: x.plan.days.map((d) => WEEK.indexOf(d) + 1), start: seconds(x.plan.start), end: seconds(x.plan.end) },
      localHours: { start: seconds('09:00:00'), end: seconds('20:00:00') },
      campaign: x.plan.name,
    }));
    const settings: OracleSettings = { variable: CALLBACKS.variable, maxPerLead: CALLBACKS.max_per_lead, horizonDays: CALLBACKS.horizon_days, toleranceMs: TOLERANCE_MS, busyGapMs: BUSY_GAP_MS, runEnd: TO };
    const j = judgeCallbacks(calls, leads, settings);

    const late = [...j.lateness].sort((a, b) => a - b);
    const q = (f: number) => Math.round((late[Math.min(late.length - 1, Math.floor(f * late.length))] ?? 0) / 1000);
    console.log(
      `callbacks-oracle (${testDialect}): ${calls.length} calls to ${people.length} people; ${j.placed} callbacks placed as asked (${j.moved} moved to the first allowed moment), ` +
        `late by p50 ${q(0.5)} s, p99 ${q(0.99)} s, max ${q(1)} s (${j.queued} later than ${TOLERANCE_MS / 60_000} min behind their campaign's queue); refused: ${j.refusedUnreadable} unreadable, ${j.refusedBeyondHorizon} beyond the horizon, ${j.refusedOverMax} over max_per_lead; ` +
        `${j.unjudged} not judged (after the run, in the past, on the horizon's edge); ${j.noAsk} calls asked none; ${drive.jumps} jumps; ${realMs} ms real; ${j.problems.length} problems`,
    );
    expect(j.problems.slice(0, 30)).toEqual([]);
    // Enough of each kind happened that the run really exercised them.
    // (Seen on 2026-11-27: SQLite 2,232 calls, 1,132 placed, 500 moved, 323 unreadable, 226
    // beyond the horizon, 350 over the maximum; PostgreSQL over four days 998, 447, 198, 143, 104, 107.)
    const least = ON_POSTGRES ? { calls: 700, placed: 250, moved: 80, unreadable: 60, horizon: 5, overMax: 30 } : { calls: 2_000, placed: 800, moved: 200, unreadable: 100, horizon: 10, overMax: 100 };
    expect(calls.length).toBeGreaterThan(least.calls);
    expect(j.placed).toBeGreaterThan(least.placed);
    expect(j.moved).toBeGreaterThan(least.moved);
    expect(j.refusedUnreadable).toBeGreaterThan(least.unreadable);
    expect(j.refusedBeyondHorizon).toBeGreaterThan(least.horizon);
    expect(j.refusedOverMax).toBeGreaterThan(least.overMax);
    // Callbacks placed on the DST days themselves, in Europe and in the US.
    const onDay = (zone: string, date: string) => calls.filter((x) => leads.find((l) => l.phone === x.phone)?.zone === zone && new Date(x.placedAt).toISOString().slice(0, 10) === date).length;
    expect(onDay('Europe/Berlin', '2026-10-26') + onDay('Europe/Berlin', '2026-10-25')).toBeGreaterThan(0);
    if (!ON_POSTGRES) expect(onDay('America/New_York', '2026-11-01') + onDay('America/New_York', '2026-11-02')).toBeGreaterThan(0);
  }, 600_000);
});

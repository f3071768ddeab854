// Lets a year of simulated time pass through the engine (who-year.test.ts) in minutes.
// Under the US rules someone is inside their hours 19 hours a day, so skipping only the
// stretches where nobody may be called (as time-year does with campaign windows) would
// still leave ~7,000 hours. Outside the transition spans this driver therefore also jumps
// over stretches where the store says nothing can happen: no call live, no lead
// claimed, and no lead due before the jump lands (a lead held by the person's hours or a
// cap is deferred to the instant it may be called, so that instant is its next_due_at).
// The engine's own timers still fire at the jump, and every call it then places is judged
// at its instant, so a lead deferred to a wrong instant shows as a call outside the rules
// (too early) or as a late first call after an opening (too late). Inside the spans time
// runs through every minute.
import type { Kysely } from 'kysely';
import { afterEach } from 'vitest';
import type { SimCall } from '../../src/simulator/types.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { LIVE_ATTEMPT_STATES, type Database } from '../../src/store/types.js';
import type { Stack } from '../helpers/stack.js';
import type { FreezingClient, HarnessClock } from '../integration/time-clock.js';
import type { Span } from './who-year-plan.js';

/** Something the test does at a simulated instant; `run` answers false to be asked again a moment later. */
export interface YearEvent {
  at: number;
  name: string;
  run(): Promise<boolean>;
}

export interface YearDriveOptions {
  clock: HarnessClock;
  /** make_call requests between their send-time check and their answer. */
  inFlight: () => number;
  calls: () => Iterable<SimCall>;
  /** The store, on a connection of the driver's own (its reads must not queue behind the engine's). */
  db: Kysely<Database>;
  end: number;
  spans: readonly Span[];
  /** In simulated time order; the driver never jumps past one. */
  events: YearEvent[];
  realTimeoutMs: number;
  /** Every read of the leads (spans included): to see each deferral the engine writes. */
  onLeads?: (leads: readonly LeadSeen[]) => void;
  /** How long before what is due a jump lands (simulated ms). */
  leadInMs?: number;
  onProgress?: (now: number) => void;
  /** Whether a lead waits for its next_due_at (default: pending or retry-scheduled). */
  waiting?: (lead: LeadSeen) => boolean;
  /** Checked last before each jump: false holds time back (something the store shows must happen first). */
  mayJump?: () => Promise<boolean>;
}

export interface YearDriveResult {
  jumps: number;
  /** Simulated ms run minute by minute inside the spans. */
  spanMs: number;
}

/** A lead as the driver read it (numbers as numbers on both dialects). */
export interface LeadSeen {
  id: number;
  phone_number: string;
  state: string;
  state_reason: string | null;
  next_due_at: number | null;
  updated_at: number;
}

/** Whether a call is live, and every lead. */
async function look(db: Kysely<Database>): Promise<{ live: boolean; leads: LeadSeen[] }> {
  const live = await db.selectFrom('attempts').select('id').where('state', 'in', LIVE_ATTEMPT_STATES).limit(1).executeTakeFirst();
  const rows = await db.selectFrom('leads').select(['id', 'phone_number', 'state', 'state_reason', 'next_due_at', 'updated_at']).execute();
  const leads = rows.map((r) => ({ ...r, id: Number(r.id), next_due_at: r.next_due_at === null ? null : Number(r.next_due_at), updated_at: Number(r.updated_at) }));
  return { live: live !== undefined, leads };
}

/**
 * Real ms between two reads of the store (each costs the engine's database a little): while
 * waiting to jump, and inside a span, where the reads only collect deferrals (which last
 * hours) and time is not jumped.
 */
const LOOK_AGAIN_REAL_MS = 5;
const SPAN_LOOK_REAL_MS = 20;

/** Runs simulated time to `end`, running the events on the way. */
export async function driveYear(o: YearDriveOptions): Promise<YearDriveResult> {
  const leadIn = o.leadInMs ?? 10_000;
  const realDeadline = Date.now() + o.realTimeoutMs;
  const events = [...o.events];
  let lastProgress = Date.now();
  let jumps = 0;
  let nextLook = 0;
  const quiet = (): boolean => {
    if (o.clock.isFrozen() || o.inFlight() > 0) return false;
    for (const call of o.calls()) if (call.finishedAt === null) return false;
    return true;
  };
  for (;;) {
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
    if (o.clock.isFrozen() || o.inFlight() > 0) continue;
    const now = o.clock.now();
    if (now >= o.end) break;
    if (Date.now() > realDeadline) throw new Error(`who-year: real timeout at simulated ${new Date(now).toISOString()}`);
    if (o.onProgress && Date.now() - lastProgress > 10_000) {
      lastProgress = Date.now();
      o.onProgress(now);
    }
    const event = events[0];
    if (event && now >= event.at) {
      if (await event.run()) events.shift();
      continue;
    }
    const span = o.spans.find((s) => s.to > now);
    const inSpan = span !== undefined && span.from <= now;
    // Outside the spans the store is read only when the simulator is quiet (a jump is possible).
    if ((!inSpan && !quiet()) || Date.now() < nextLook) continue;
    const seen = await look(o.db);
    nextLook = Date.now() + (inSpan ? SPAN_LOOK_REAL_MS : LOOK_AGAIN_REAL_MS);
    o.onLeads?.(seen.leads);
    if (inSpan) continue; // minute by minute
    if (seen.live || seen.leads.some((l) => l.state === 'calling') || !quiet()) continue;
    if (o.mayJump && !(await o.mayJump())) continue;
    const waiting = o.waiting ?? ((l: LeadSeen) => l.state === 'pending' || l.state === 'retry-scheduled');
    let due: number | null = null;
    for (const l of seen.leads) if (waiting(l) && l.next_due_at !== null) due = Math.min(due ?? l.next_due_at, l.next_due_at);
    const target = Math.min(due === null ? o.end : due - leadIn, span ? span.from - leadIn : o.end, event?.at ?? o.end, o.end);
    // The engine may have begun something while the store answered: look again, synchronously with the jump.
    const at = o.clock.now();
    if (target <= at + leadIn || !quiet()) continue;
    o.clock.jumpTo(target);
    jumps++;
  }
  const spanMs = o.spans.reduce((sum, s) => sum + Math.max(0, Math.min(s.to, o.end) - s.from), 0);
  return { jumps, spanMs };
}

/** What a driven run opens; the test fills it in, and each is closed after the test. */
export interface DrivenRun {
  stack?: Stack;
  /** The driver's own connection to the store. */
  reader?: DatabaseHandle;
  clock?: HarnessClock;
}

/** Registers the teardown of a driven run (the reader, then the stack, then the clock) and returns what the test fills in. */
export function drivenRun(): DrivenRun {
  const run: DrivenRun = {};
  afterEach(async () => {
    await run.reader?.close();
    await run.stack?.close();
    run.clock?.dispose();
    run.reader = run.stack = run.clock = undefined;
  });
  return run;
}

/** The options of driveYear that come from a stack run: its clock, its make_call requests in flight, the simulator's calls, the driver's connection. */
export function stackDrive(stack: Stack, clock: HarnessClock, freezing: () => FreezingClient | null, db: Kysely<Database>): Pick<YearDriveOptions, 'clock' | 'inFlight' | 'calls' | 'db'> {
  return { clock, inFlight: () => freezing()?.inFlight() ?? 0, calls: () => stack.sim.state.calls.values(), db };
}

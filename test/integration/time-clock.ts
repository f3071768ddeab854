// The clock of the time harness (issue 6); see time-fixture.ts for why it exists.
// HarnessClock: real time sped up, frozen while a request is in flight, jumping over
// closed stretches, and counting a stall of the process as at most a few ms.
// driveUntil: lets a run's simulated time pass to its end, jumping where nothing can happen.
import type { Kysely } from 'kysely';
import { registerWalSync, walSyncOf } from '../../src/store/durable.js';
import type { Database } from '../../src/store/types.js';
import type { CampaignConfig } from '../../src/config/types.js';
import type { EngineClient } from '../../src/engine/ports.js';
import type { SimCall } from '../../src/simulator/types.js';
import type { Clock } from '../../src/time/clock.js';
import { isOpen, windowFromCampaign } from '../../src/time/window.js';
import { nextOpeningOf } from './time-fixture.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Real milliseconds of one step at most: a longer stall (GC, a busy worker) counts as this. */
const MAX_REAL_STEP_MS = 5;

/**
 * Real time sped up `factor` times from `origin`, that can be frozen and can jump ahead.
 * A 1 ms ticker moves it and fires due timers; a stall of the process longer than
 * MAX_REAL_STEP_MS counts as only that much, so a pause of the event loop slows the run
 * down instead of letting simulated minutes pass unseen.
 */
export class HarnessClock implements Clock {
  private virtual: number;
  private lastReal = performance.now();
  private frozen = 0;
  private timers: Timer[] = [];
  private seq = 0;
  private readonly ticker: NodeJS.Timeout;
  /** Simulated milliseconds skipped by jumps, for the report. */
  skippedMs = 0;
  /** Real milliseconds of stalls beyond MAX_REAL_STEP_MS that did not count (the run slowed down). */
  stalledMs = 0;

  constructor(
    private readonly factor: number,
    origin: number,
  ) {
    this.virtual = origin;
    this.ticker = setInterval(() => this.tick(), 1);
  }

  now(): number {
    if (this.frozen > 0) return this.virtual;
    return Math.floor(this.virtual + Math.min(performance.now() - this.lastReal, MAX_REAL_STEP_MS) * this.factor);
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: this.now() + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      const i = this.timers.indexOf(timer);
      if (i >= 0) this.timers.splice(i, 1);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.setTimer(ms, done);
      function done(): void {
        cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops simulated time (nestable) until as many `thaw` calls. */
  freeze(): void {
    if (this.frozen === 0) {
      this.virtual = this.now();
      this.lastReal = performance.now();
    }
    this.frozen++;
  }

  /** Undoes one `freeze`; time flows again when none is left. */
  thaw(): void {
    if (this.frozen === 0) throw new Error('thaw without freeze');
    this.frozen--;
    if (this.frozen === 0) this.lastReal = performance.now();
  }

  /**
   * Freezes for at most `capRealMs` real ms; returns the release. The cap keeps a wait on
   * this very clock (a rate budget) from waiting forever.
   */
  hold(capRealMs: number): () => void {
    this.freeze();
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      clearTimeout(cap);
      this.thaw();
    };
    const cap = setTimeout(release, capRealMs);
    return release;
  }

  isFrozen(): boolean {
    return this.frozen > 0;
  }

  /** Moves simulated time forward to `t`, firing every timer due by then in time order. */
  jumpTo(t: number): void {
    if (this.frozen > 0) throw new Error('jump while frozen');
    const now = this.now();
    if (t <= now) return;
    this.skippedMs += t - now;
    this.virtual = t;
    this.lastReal = performance.now();
    this.fireDue();
  }

  /** Stops the ticker and drops every timer; the clock is unusable afterwards. */
  dispose(): void {
    this.timers = [];
    clearInterval(this.ticker);
  }

  private tick(): void {
    // Frozen, time stands still but what was already due still happens: with reads held
    // back to back (adaptive polling) the ticks otherwise nearly all land in frozen spells,
    // and simulated minutes passed in the short gaps between them without firing the
    // simulator's timers (a 30 s ring lasted 25 minutes and looked like a stuck call).
    if (this.frozen > 0) return this.fireDue();
    const real = performance.now();
    this.stalledMs += Math.max(0, real - this.lastReal - MAX_REAL_STEP_MS);
    this.virtual = this.now();
    this.lastReal = real;
    this.fireDue();
  }

  private fireDue(): void {
    const now = this.now();
    if (!this.timers.some((t) => t.at <= now)) return;
    const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => t.at > now);
    for (const t of due) t.fn();
  }
}

/** How many make_call requests are between their send-time check and their answer. */
export interface FreezingClient {
  client: EngineClient;
  inFlight(): number;
  /** Real ms simulated time stood still for make_call requests (about; overlaps counted twice). */
  frozenMs(): number;
}

/** Real ms a read may hold simulated time still (see `hold`): far above any loopback answer, even on a loaded machine. */
const READ_HOLD_CAP_MS = 3_000;

/**
 * Wraps the engine's client so simulated time stands still from the send-time window
 * check until make_call answers (the simulator then records the judged instant), and
 * while a read is in flight: at 50,000× a 20 ms poll of the call list would otherwise
 * last 17 simulated minutes, and the engine's stuck-call rule (max duration + 5 min)
 * would close calls whose end the answer was about to show.
 */
export function freezeAroundMakeCall(inner: EngineClient, clock: HarnessClock): FreezingClient {
  let inFlight = 0;
  let frozenMs = 0;
  const held = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const release = clock.hold(READ_HOLD_CAP_MS);
      try {
        return await fn(...args);
      } finally {
        release();
      }
    };
  const client: EngineClient = {
    ...inner,
    listCallsSince: held(inner.listCallsSince.bind(inner)),
    probe: held(inner.probe.bind(inner)),
    assistants: held(inner.assistants.bind(inner)),
    async makeCall(req, opts) {
      let froze = false;
      inFlight++;
      const canSend = (): boolean => {
        // Frozen BEFORE the engine reads the clock, so the instant it judges is the one recorded.
        clock.freeze();
        froze = true;
        const ok = opts?.canSend ? opts.canSend() : true;
        if (!ok) {
          froze = false;
          clock.thaw();
        }
        return ok;
      };
      const t0 = performance.now();
      try {
        return await inner.makeCall(req, { canSend });
      } finally {
        inFlight--;
        if (froze) {
          clock.thaw();
          frozenMs += performance.now() - t0;
        }
      }
    },
  };
  return { client, inFlight: () => inFlight, frozenMs: () => frozenMs };
}

/** What a harness run needs: the clock, the freezing client and what can open. */
export interface DriveOptions {
  clock: HarnessClock;
  inFlight: () => number;
  campaigns: readonly CampaignConfig[];
  calls: () => Iterable<SimCall>;
  /** Simulated instant to stop at. */
  end: number;
  /** Real milliseconds before giving up. */
  realTimeoutMs: number;
  /** How long before an opening a jump lands (simulated ms), so the engine is awake for it. */
  leadInMs?: number;
  /** Called now and then with the simulated instant (progress output for long runs). */
  onProgress?: (now: number) => void;
}

/**
 * Lets simulated time run to `end`, jumping over closed stretches when nothing is in
 * progress: no make_call in flight, every campaign window closed, every simulator call final.
 */
export async function driveUntil(o: DriveOptions): Promise<void> {
  const leadIn = o.leadInMs ?? 60_000;
  const realDeadline = Date.now() + o.realTimeoutMs;
  let lastProgress = Date.now();
  for (;;) {
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
    if (o.clock.isFrozen() || o.inFlight() > 0) continue;
    const now = o.clock.now();
    if (now >= o.end) return;
    if (Date.now() > realDeadline) throw new Error(`time harness: real timeout at simulated ${new Date(now).toISOString()}, end ${new Date(o.end).toISOString()}`);
    if (o.onProgress && Date.now() - lastProgress > 10_000) {
      lastProgress = Date.now();
      o.onProgress(now);
    }
    if (o.campaigns.some((c) => isOpen(windowFromCampaign(c, c.timezone ?? 'UTC'), now))) continue;
    const opening = nextOpeningOf(o.campaigns, now);
    const target = Math.min(opening === null ? o.end : opening - leadIn, o.end);
    if (target <= now + leadIn) continue;
    let busy = false;
    for (const call of o.calls()) {
      if (call.finishedAt === null) {
        busy = true;
        break;
      }
    }
    if (!busy) o.clock.jumpTo(target);
  }
}

/**
 * A claim's disk sync runs off the thread (src/store/durable.ts), so the event loop, and the
 * harness clock, go on during it: at these speeds one fdatasync (2–14 ms on this machine)
 * would be simulated minutes before the make_call it precedes. Real I/O, like make_call
 * (freezeAroundMakeCall): the clock is held while it runs.
 */
export function freezeAroundDiskSync(db: Kysely<Database>, clock: HarnessClock): void {
  const sync = walSyncOf(db);
  if (!sync) return;
  registerWalSync(db, async () => {
    const release = clock.hold(1_000);
    try {
      await sync();
    } finally {
      release();
    }
  });
}

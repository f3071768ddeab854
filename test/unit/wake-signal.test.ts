import { describe, expect, it } from 'vitest';
import { createWakeSignal } from '../../src/engine/wake-signal.js';
import { ManualClock } from '../../src/time/clock.js';

/** Every promise job queued so far, and those they queue, without letting a turn of the event loop pass. */
async function drainJobs(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

describe('wake signal', () => {
  it('a woken sleep returns a turn after the ring, never within the task that rang', async () => {
    const signal = createWakeSignal();
    let woke = false;
    const sleeping = signal.sleep(new ManualClock(), 30_000).then(() => {
      woke = true;
    });
    signal.wake();
    await drainJobs();
    // Still the ringing task: a pass woken here would run on in it (on SQLite, all of it).
    expect(woke).toBe(false);
    await new Promise<void>((resolve) => setImmediate(resolve));
    await sleeping;
    expect(woke).toBe(true);
  });

  it('rings of one turn wake one pass', async () => {
    const turns: (() => void)[] = [];
    const signal = createWakeSignal({ defer: (fn) => turns.push(fn) });
    const clock = new ManualClock();
    let passes = 0;
    const loop = (async () => {
      for (let i = 0; i < 2; i++) {
        await signal.sleep(clock, 30_000);
        passes++;
      }
    })();
    for (let i = 0; i < 20; i++) signal.wake();
    await drainJobs();
    expect(turns).toHaveLength(1);
    turns.shift()!();
    await drainJobs();
    expect(passes).toBe(1);
    // The second sleep is not ended by the rings that came before the pass.
    expect(turns).toHaveLength(0);
    await clock.advance(30_000);
    expect(passes).toBe(2);
    await loop;
  });

  it('a ring before the sleep is kept', async () => {
    const signal = createWakeSignal();
    signal.wake();
    const clock = new ManualClock();
    await signal.sleep(clock, 30_000);
    expect(clock.pending()).toBe(0);
  });
});

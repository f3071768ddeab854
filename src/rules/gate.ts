// A gate is one condition on the instant of a call (a window in some zone, a regional
// rule): open or closed at an instant, and when it next opens. The person's window is
// the intersection of their gates, so that rules only ever narrow it.
import { isOpen, nextOpening, type WindowSpec } from '../time/window.js';

export interface Gate {
  /** Why it closes, for explain and the lead's state_reason ("lead_local_hours in America/Chicago"). */
  label: string;
  isOpen(at: number): boolean;
  /** Smallest instant ≥ from at which the gate is open; null when none within 400 days. */
  nextOpening(from: number): number | null;
}

/** A calling window (time/window.ts, with its DST policy) as a gate. */
export function windowGate(spec: WindowSpec, label: string): Gate {
  return { label, isOpen: (at) => isOpen(spec, at), nextOpening: (from) => nextOpening(spec, from) };
}

/** The first closed gate at `at`, or null when every one is open. */
export function firstClosed(gates: readonly Gate[], at: number): Gate | null {
  for (const g of gates) if (!g.isOpen(at)) return g;
  return null;
}

/** Horizon of joint openings, as for single windows. */
const HORIZON_MS = 400 * 86_400_000;

/**
 * Smallest instant t ≥ from at which every gate is open, or null within 400 days. Each
 * round moves t to some gate's next opening; every skipped instant had that gate closed,
 * so the first t no gate moves is the joint opening (as nextOpeningAll in time/window.ts).
 */
export function nextOpeningOfAll(gates: readonly Gate[], from: number): number | null {
  const horizon = from + HORIZON_MS;
  let t = from;
  for (;;) {
    let moved = false;
    for (const g of gates) {
      const n = g.nextOpening(t);
      if (n === null || n > horizon) return null;
      if (n > t) {
        t = n;
        moved = true;
      }
    }
    if (!moved) return t;
  }
}

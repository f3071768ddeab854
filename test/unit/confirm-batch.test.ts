// Each account confirms its webhook successes at its own batch size (src/engine/policy.ts,
// confirmBatchOf), so that accounts dialing at one pace do not all list their calls at once.
import { describe, expect, it } from 'vitest';
import { CONFIRM_BATCH, confirmBatchOf } from '../../src/engine/policy.js';

describe('confirmBatchOf', () => {
  it('gives each account a fixed batch between half of CONFIRM_BATCH and CONFIRM_BATCH, spread over the range', () => {
    const names = Array.from({ length: 200 }, (_, i) => `acct-${String(i).padStart(3, '0')}`);
    const batches = names.map(confirmBatchOf);
    for (const b of batches) {
      expect(b).toBeGreaterThanOrEqual(CONFIRM_BATCH / 2);
      expect(b).toBeLessThanOrEqual(CONFIRM_BATCH);
    }
    // The same name, the same batch (every restart, every instance).
    expect(names.map(confirmBatchOf)).toEqual(batches);
    // Near names land apart: 200 accounts take most of the 51 sizes, none more than 5 % of them.
    const counts = new Map<number, number>();
    for (const b of batches) counts.set(b, (counts.get(b) ?? 0) + 1);
    expect(counts.size).toBeGreaterThan(40);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(10);
  });
});

// Who may be called (docs/design.md §11), regional rules in the running engine: the shipped US example over a Sunday
// and Labor Day (2026-09-06/07) for leads in every US zone, Alaska, Hawaii, Puerto Rico
// and multi-zone area codes. Zero calls outside what the rules allow, judged from the
// simulator's call records by an oracle of luxon wall-clock fields (not the engine's code).
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { readRulesFile } from '../../src/config/calling-rules.js';
import { oracleOpen, PEOPLE } from '../helpers/calling-rules-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { driveUntil, freezeAroundDiskSync, freezeAroundMakeCall, HarnessClock, type FreezingClient } from './time-clock.js';

const US_RULES = path.join(import.meta.dirname, '../../config/calling-rules/us.yaml');

describe('calling rules in the engine (docs/design.md §11)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  /** Runs the US example from `from` to `to` on the time harness; returns the rules and the simulator's calls. */
  async function runRules(from: number, to: number) {
    const { rules, problems } = await readRulesFile(US_RULES);
    expect(problems).toEqual([]);
    const clock = new HarnessClock(6000, from);
    let freezing: FreezingClient | null = null;
    clock.freeze();
    stack = await startStack({
      clock,
      startEngine: false,
      campaigns: [
        {
          name: 'us',
          // The campaign's own window is the whole day: only the person's rules narrow it.
          settings: { maxCallsInParallel: 4, maxRetries: 1_000_000, retryIntervalSeconds: 1200, markCompleteWhenNoLeads: false, callingPolicy: { rules: rules!, caps: [] } },
          leads: PEOPLE.map((p) => ({ phone: p.phone })),
        },
      ],
      // Nobody answers: every lead is retried all through its open hours.
      fixedOutcomes: PEOPLE.map((p) => ({ phone_number: p.phone, status: 'busy', duration: 0 })),
      wrapClient: (inner) => {
        freezing = freezeAroundMakeCall(inner, clock);
        return freezing.client;
      },
    });
    const s = stack;
    await s.client.updateAssistant(s.assistantId, { max_call_duration: 1200 });
    freezeAroundDiskSync(s.db, clock);
    await s.startEngine();
    clock.thaw();
    await driveUntil({ clock, inFlight: () => freezing?.inFlight() ?? 0, campaigns: s.campaigns.map((c) => c.config), calls: () => s.sim.state.calls.values(), end: to, realTimeoutMs: 90_000 });
    await s.stopEngine(5_000);
    const calls = s.simCalls();
    // Zero calls outside the rules, each judged at the instant the simulator recorded it.
    for (const call of calls) {
      const person = PEOPLE.find((p) => p.phone === call.client_phone_number)!;
      const initiated = call.timeline.find((e) => e.status === 'initiated')?.at ?? call.createdAt;
      if (!oracleOpen(rules!, person, initiated)) {
        throw new Error(`call ${call.id} to ${person.phone} at ${person.zones.map((z) => DateTime.fromMillis(initiated, { zone: z }).toISO()).join(' / ')} is outside the rules`);
      }
    }
    // Whoever the rules allowed for an hour or more was called.
    for (const p of PEOPLE) {
      let open = 0;
      for (let t = from; t < to; t += 60_000) if (oracleOpen(rules!, p, t)) open++;
      const n = calls.filter((c) => c.client_phone_number === p.phone).length;
      if (open >= 60) expect(n, `${p.phone}: ${open} open minutes`).toBeGreaterThan(0);
      if (open === 0) expect(n, p.phone).toBe(0);
    }
    return { rules: rules!, calls };
  }

  it('places no call outside the rules over a Sunday and a holiday, and uses the hours they allow', async () => {
    const from = Date.UTC(2026, 8, 6, 8, 0, 0); // Sunday 2026-09-06 08:00 UTC
    const to = Date.UTC(2026, 8, 7, 22, 0, 0); // Monday (Labor Day) 22:00 UTC
    const { calls } = await runRules(from, to);
    expect(calls.length).toBeGreaterThan(50);
    const count = (phone: string) => calls.filter((c) => c.client_phone_number === phone).length;
    // Louisiana and Alabama: Sunday, then their state holiday: nobody there is called at all.
    expect(count('+15045550100')).toBe(0);
    expect(count('+12055550100')).toBe(0);
    // Mississippi has no holiday rule: called on Monday only.
    expect(count('+16015550100')).toBeGreaterThan(0);
    // Texas on Sunday: only from noon local.
    const texasSunday = calls.filter((c) => c.client_phone_number === '+15125550100' && DateTime.fromMillis(c.createdAt, { zone: 'America/Chicago' }).weekday === 7);
    expect(texasSunday.length).toBeGreaterThan(0);
    for (const c of texasSunday) expect(DateTime.fromMillis(c.createdAt, { zone: 'America/Chicago' }).hour).toBeGreaterThanOrEqual(12);
    // Florida (3 per 24 h by its rule): never a fourth call inside 24 h.
    const fl = calls.filter((c) => c.client_phone_number === '+13055550100').map((c) => c.createdAt);
    expect(fl.length).toBeGreaterThanOrEqual(3);
    for (const t of fl) expect(fl.filter((u) => u > t - 24 * 3_600_000 && u <= t).length).toBeLessThanOrEqual(3);
  }, 150_000);

  // The US DST changes of 2026, through the engine, judged minute by minute by the oracle
  // at each call's instant (spring forward: 02:00 → 03:00 on Sunday 03-08; fall back:
  // 02:00 → 01:00 on Sunday 11-01), from the Saturday night to the Monday morning in the US.
  for (const [name, from, to] of [
    ['spring forward (2026-03-08)', Date.UTC(2026, 2, 8, 4), Date.UTC(2026, 2, 9, 6)],
    ['fall back (2026-11-01)', Date.UTC(2026, 10, 1, 4), Date.UTC(2026, 10, 2, 6)],
  ] as const) {
    it(`places no call outside the rules across the ${name}`, async () => {
      const { calls } = await runRules(from, to);
      expect(calls.length).toBeGreaterThan(30);
    }, 150_000);
  }
});

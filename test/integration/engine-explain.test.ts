// explain asks the planner: for random small stores (campaigns with windows, limits,
// states and problems; leads in every state with due times and zones; live attempts;
// the suppression list; a daemon running or not, with or without a daemon-wide limit),
// explain's verdict on every lead is the one the engine's planner (planLead) gives for
// the same facts, taken here from the generated model rather than from the store. And
// with a daemon that may dial, one pass of the real dial loop on that store claims only
// leads explain called due, and claims one whenever explain called one due.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { createCampaignCatalog } from '../../src/engine/campaign-catalog.js';
import { createCampaignView } from '../../src/engine/campaign-view.js';
import { createDialLoop } from '../../src/engine/loops/dial-loop.js';
import type { EngineClient } from '../../src/engine/ports.js';
import { createServiceState } from '../../src/engine/service-state.js';
import { createWakeSignal } from '../../src/engine/wake-signal.js';
import { explainNumber } from '../../src/explain/explain.js';
import { silentLogger } from '../../src/log/logger.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/types.js';
import type { Clock } from '../../src/time/clock.js';
import { planLead, type GateVerdict, type LeadPlan } from '../../src/engine/planner.js';
import { runtimeCampaign } from '../../src/engine/runtime-campaign.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { addSuppressions } from '../../src/store/suppressions.js';
import type { CampaignRow, CampaignState, LeadState } from '../../src/store/types.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { campaignConfig, insertAttempt, insertCampaign, upsertDaemon } from './status-fixture.js';

const H = 3_600_000;
/** Wednesday 3 June 2026, 10:00 UTC: 06:00 in New York (the numbers' zone), 19:00 in Tokyo. */
const NOW = Date.UTC(2026, 5, 3, 10, 0, 0);
const PHONES = ['+12125550100', '+12125550101', '+12125550102', '+12125550103', '+12125550104'];

const campaignArb = fc.record({
  state: fc.constantFrom<CampaignState>('running', 'running', 'running', 'running', 'running', 'paused', 'stopped', 'completed'),
  problem: fc.constantFrom<string | null>(null, null, null, null, 'assistant 12 not found by the service (404)'),
  /** Open around the clock, or only 01:00–02:00 UTC (closed now). */
  windowOpen: fc.constantFrom(true, true, true, false),
  /** lead_local_hours 09:00–17:00: closed now in New York and Tokyo, open in UTC. */
  localHours: fc.boolean(),
  max: fc.integer({ min: 1, max: 3 }),
});

const leadArb = fc.record({
  campaign: fc.nat(),
  phone: fc.constantFrom(...PHONES),
  state: fc.constantFrom<LeadState>('pending', 'pending', 'pending', 'retry-scheduled', 'calling', 'calling', 'completed', 'reached-max-retries', 'invalid', 'suppressed'),
  dueIn: fc.constantFrom(-H, -H, 0, H),
  timezone: fc.constantFrom<string | null>(null, 'UTC', 'UTC', 'Asia/Tokyo'),
  /** For a calling lead: its live attempt is there (else the lead is being recorded). */
  live: fc.constantFrom(true, true, false),
});

const storeArb = fc.record({
  campaigns: fc.array(campaignArb, { minLength: 1, maxLength: 3 }),
  leads: fc.array(leadArb, { minLength: 1, maxLength: 12 }),
  suppressed: fc.subarray(PHONES, { maxLength: 2 }),
  daemon: fc.option(
    fc.record({
      running: fc.constantFrom(true, true, true, false),
      tokenRejected: fc.constantFrom(false, false, false, true),
      max: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null, freq: 3 }),
    }),
    { nil: null },
  ),
});

/** The explain codes that say a planner verdict (some verdicts have a finer word in explain). */
function codesFor(plan: LeadPlan): string[] {
  switch (plan.kind) {
    case 'final':
      return [plan.state];
    case 'calling':
      return ['live-call', 'calling', 'unknown-attempt'];
    case 'campaign-not-running':
      return [`campaign-${plan.state}`];
    case 'not-due':
      return ['retry-not-due', 'attempt-cap'];
    case 'person-hours':
      return ['lead-local-hours', 'calling-rule'];
    case 'gate':
      return [plan.gate];
    case 'campaign-at-limit':
      return ['at-limit'];
    case 'dial':
      return ['due'];
    default:
      return [plan.kind];
  }
}

/**
 * One pass of the real dial loop over the store at NOW, its make_call never answered;
 * returns the leads it claimed. The loop's first rest (a sleep longer than none) ends the run.
 */
async function onePass(db: Kysely<Database>, accountMaxCalls: number | undefined): Promise<number[]> {
  const logger = silentLogger();
  let passDone!: () => void;
  const done = new Promise<void>((resolve) => (passDone = resolve));
  const clock: Clock = {
    now: () => NOW,
    // A refused claim (rule 3: the number's live call, which the claim checks) looks again at
    // once: those passes run; the first real rest ends the run.
    sleep: (ms, signal) =>
      ms <= 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            passDone();
            signal?.addEventListener('abort', () => resolve(), { once: true });
          }),
    setTimer: () => () => undefined,
  };
  const client: EngineClient = {
    makeCall: () => new Promise(() => undefined),
    listCallsSince: async () => undefined,
    probe: async () => undefined,
    assistants: async () => [],
  };
  const campaigns = createCampaignView(createCampaignCatalog(db, logger, { now: () => clock.now(), checkEveryMs: 1000 }));
  await campaigns.refresh(true);
  await campaigns.refreshSuppressions();
  const loop = createDialLoop({
    db,
    commit: createGroupCommit(db),
    client,
    clock,
    logger,
    instanceId: 'property-pass',
    accountMaxCalls,
    settleMs: 60_000,
    campaigns,
    service: createServiceState(client, logger),
    wake: createWakeSignal(),
    poll: { lastPollAt: () => 0, urgent: () => undefined, replan: () => undefined },
  });
  loop.start();
  await done;
  loop.stop();
  await loop.done();
  const rows = await db.selectFrom('attempts').select('lead_id').where('owner', '=', 'property-pass').execute();
  return rows.map((r) => r.lead_id);
}

/** Empties the tables a run fills: one migrated store serves every run (a PostgreSQL database per run is slow). */
async function emptyStore(db: Kysely<Database>): Promise<void> {
  for (const table of ['events', 'attempts', 'lead_contacts', 'leads', 'suppressions', 'daemons', 'campaigns'] as const) await db.deleteFrom(table).execute();
}

let store: DatabaseHandle | undefined;
beforeAll(async () => {
  store = await openTestStore();
  await migrateToLatest(store.db, { clock: { now: () => NOW } });
});
afterAll(async () => store?.close());

describe('explain asks the planner', () => {
  it("gives the planner's verdict for every lead of random stores", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(storeArb, async (m) => {
        const db = store!.db;
        await emptyStore(db);
        const rows: CampaignRow[] = [];
        for (const [i, c] of m.campaigns.entries()) {
          const cfg: CampaignConfig = campaignConfig(`c${i}`, {
            timezone: 'UTC',
            allowedDays: [1, 2, 3, 4, 5, 6, 7],
            allowedHoursStart: c.windowOpen ? 0 : 3600,
            allowedHoursEnd: c.windowOpen ? 0 : 2 * 3600,
            maxCallsInParallel: c.max,
            ...(c.localHours ? { leadLocalHours: { start: 9 * 3600, end: 17 * 3600 } } : {}),
          });
          const id = await insertCampaign(db, cfg, { state: c.state, problem: c.problem, timezone: 'UTC', now: NOW - 24 * H });
          rows.push(await db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
        }
        // The model's live attempts, as the engine would count them.
        const live: { campaignId: number; phone: string }[] = [];
        const leads: { id: number; campaignId: number; phone: string; state: LeadState; due: number; timezone: string | null }[] = [];
        for (const [i, l] of m.leads.entries()) {
          const row = rows[l.campaign % rows.length]!;
          const due = NOW + l.dueIn;
          const r = await db
            .insertInto('leads')
            .values({ campaign_id: row.id, dedupe_key: `${l.phone}#${i}`, phone_number: l.phone, timezone: l.timezone, state: l.state, state_reason: null, next_due_at: due, remote_lead_id: null, source_file: null, source_line: null, created_at: NOW - 24 * H, updated_at: NOW - H })
            .returning('id')
            .executeTakeFirstOrThrow();
          leads.push({ id: r.id, campaignId: row.id, phone: l.phone, state: l.state, due, timezone: l.timezone });
          // One live call per number (rule 3; the store refuses a second one).
          if (l.state === 'calling' && l.live && !live.some((a) => a.phone === l.phone)) {
            await insertAttempt(db, { campaignId: row.id, leadId: r.id, state: 'placed', createdAt: NOW - 60_000 });
            live.push({ campaignId: row.id, phone: l.phone });
          }
        }
        await addSuppressions(db, m.suppressed, 'test', NOW - H);
        const d = m.daemon;
        if (d) {
          await upsertDaemon(db, { instance: 'd', pid: 7, hostname: 'host', heartbeatAt: d.running ? NOW - 1000 : NOW - 60_000, api: d.tokenRejected ? 'token-rejected' : 'ok', maxCalls: d.max });
        }
        const gate: GateVerdict = !d?.running ? 'daemon-down' : d.tokenRejected ? 'token-rejected' : 'open';

        const reasons = new Map<number, string>();
        for (const phone of new Set(leads.map((l) => l.phone))) {
          const explained = await explainNumber(db, phone, NOW, () => true);
          for (const l of explained.leads) reasons.set(l.lead_id, l.reason);
          for (const lead of leads.filter((l) => l.phone === phone)) {
            const row = rows.find((r) => r.id === lead.campaignId)!;
            const c = runtimeCampaign(row);
            const plan = planLead(
              { state: lead.state, nextDueAt: lead.due, phone, suppressed: m.suppressed.includes(phone), person: c.person(phone, lead.timezone), cap: null },
              {
                now: NOW,
                campaign: c,
                gate,
                phoneBusy: live.some((a) => a.phone === phone),
                campaignLive: live.filter((a) => a.campaignId === lead.campaignId).length,
                campaignMax: c.config.maxCallsInParallel,
                daemonLive: live.length,
                daemonMax: d?.max ?? null,
              },
            );
            const got = explained.leads.find((x) => x.lead_id === lead.id);
            expect(got, `lead ${lead.id} explained`).toBeDefined();
            expect(codesFor(plan), `lead ${lead.id} (${lead.state}, ${phone}): explain said ${got!.reason}: ${got!.message}`).toContain(got!.reason);
          }
        }

        if (gate === 'open') {
          const claimed = await onePass(db, d?.max ?? undefined);
          const due = [...reasons].filter(([, r]) => r === 'due').map(([id]) => id);
          for (const id of claimed) expect(reasons.get(id), `lead ${id} dialled`).toBe('due');
          if (due.length > 0) expect(claimed.length, `leads due: ${due.join(', ')}`).toBeGreaterThan(0);
        }
      }),
      {
        numRuns: 120,
        // Always among the runs: the daemon-wide limit full with the live call in another campaign.
        examples: [
          [
            {
              campaigns: [
                { state: 'running', problem: null, windowOpen: true, localHours: false, max: 2 },
                { state: 'running', problem: null, windowOpen: true, localHours: false, max: 2 },
              ],
              leads: [
                { campaign: 0, phone: PHONES[0]!, state: 'calling', dueIn: -H, timezone: null, live: true },
                { campaign: 1, phone: PHONES[1]!, state: 'pending', dueIn: -H, timezone: null, live: false },
              ],
              suppressed: [],
              daemon: { running: true, tokenRejected: false, max: 1 },
            },
          ],
          // A completed campaign with a lead due again: the pass reopens it and the next dials the lead.
          [
            {
              campaigns: [{ state: 'completed', problem: null, windowOpen: true, localHours: false, max: 2 }],
              leads: [{ campaign: 0, phone: PHONES[0]!, state: 'retry-scheduled', dueIn: -H, timezone: null, live: false }],
              suppressed: [],
              daemon: { running: true, tokenRejected: false, max: 2 },
            },
          ],
        ],
      },
    );
  });
});

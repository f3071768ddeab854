// `npx tsx bench/engine-features.ts [--quick] [--dialect postgres]`: what the features that
// decide from the conversation (rules on the result, assistant variants, a budget, callbacks)
// cost the engine (issue 24's figures), measured in ONE process against the simulator:
//  1. throughput: rounds of the real engine (as engine-throughput.ts runs it) alternate
//     plain, featured, plain, featured… on a fresh stack each, the same leads and the same
//     extracted variables every time; only the campaign's settings differ. Each round counts
//     calls placed per second and, stricter, until every call's outcome is final (the rules
//     decide when the call list confirms a webhook's success). Alternating is what keeps
//     the ratio fair on a shared machine: a burst of load hits both kinds of round. A first
//     pair warms the process up and is not counted.
//     Goal: featured ÷ plain ≥ 0.9 (median of the rounds; the worst round is printed too).
//  2. decision cost: one final outcome recorded as the engine records it (applyObservation
//     in its own transaction: the attempt ended, the lead decided by leadDecider's rules
//     and callbacks) for a plain and a featured campaign, one after the other, N times; one
//     featured call in ten asks a callback time, read as the engine reads it. A phrase read
//     alone is timed beside. Goal: p99 featured − p99 plain ≤ 1 ms.
//     The budget's spending (read once per dial pass) and the lead's variant (settled once
//     per claim) are timed beside, without a goal: their cost is in the throughput figures.
// `--statements` prints the SQL statements per call of the last plain and featured rounds,
// and per outcome of each side of the decision figure. Under `node --cpu-prof` each round
// prints its bounds on the profile's clock, for `bench/profile-summary.ts FILE --from US --to US`.
import { performance } from 'node:perf_hooks';
import type { CampaignConfig } from '../src/config/types.js';
import { readBudgetFacts } from '../src/engine/budget-read.js';
import { applyObservation, type OutcomeContext } from '../src/engine/outcomes.js';
import { runtimeCampaign, type RuntimeCampaign } from '../src/engine/runtime-campaign.js';
import { pickVariant } from '../src/engine/variant-pick.js';
import { readCallbackTime } from '../src/rules/callback-time.js';
import { claimAttempts } from '../src/store/attempts.js';
import { getCampaignById } from '../src/store/campaigns.js';
import { LIVE_ATTEMPT_STATES, type AttemptRow } from '../src/store/types.js';
import { settleLeadVariants } from '../src/store/variants.js';
import { benchDialect, dialectLabel } from './lib/bench-db.js';
import { atLeast, atMost, isQuick, reportFigure } from './lib/figures.js';
import { benchPhone, startBenchStack, waitFor, type BenchStack } from './lib/engine-stack.js';
import { installStatementLog, type StatementStat } from './lib/statement-log.js';
import { fmt, monotonicUs, percentile, summary } from './lib/stats.js';

const BENCH = 'engine-features';
const quick = isQuick();
const dialect = benchDialect();
const LEADS = quick ? 1_000 : 3_000;
/** Pairs of rounds (plain, featured). */
const PAIRS = quick ? 2 : 3;
const DECISIONS = quick ? 500 : 2_000;
const LIMIT = 200;
/** As engine-throughput.ts: calls of 3–9 real ms, so the live-call limit never holds the engine back. */
const SCALE = 1000;
const statements = process.argv.includes('--statements') ? installStatementLog() : null;
const profiling = process.execArgv.some((a) => a.startsWith('--cpu-prof'));

/** The campaign a `move_to` continues leads in: the stack's second campaign, paused, so moved leads wait there. */
const TARGET = 'bench-2';

/** The features on, as a campaign file would set them (README, "What the conversation decides"). */
function featured(assistantId: number): Partial<CampaignConfig> {
  return {
    onResult: [
      { position: 1, variable: { name: 'reason', equals: 'wrong number' }, then: { kind: 'invalid' } },
      { position: 2, variable: { name: 'interest', equals: 'later' }, then: { kind: 'move-to', campaign: TARGET } },
      { position: 3, variable: { name: 'interest', in: ['yes'] }, then: { kind: 'complete' } },
    ],
    extractedVariables: ['interest', 'reason', 'callback_at'],
    // The simulator has one outbound assistant (the one whose webhook is set): the variants
    // share it; assignment, storage and figures are the same as with distinct assistants.
    variants: [
      { name: 'warm', assistantId, weight: 2 },
      { name: 'direct', assistantId, weight: 1 },
      { name: 'short', assistantId, weight: 1 },
    ],
    successWhen: { variable: 'interest', values: ['yes'] },
    // Far above what a run spends: the checks run on every pass, the cap never pauses.
    budget: { maxCost: 1_000_000, maxCostPerDay: 100_000, assumedCostPerCall: 0.2 },
    // One call in ten asks a time (extractedFor): read in the person's zone, scheduled, counted.
    callbacks: { variable: 'callback_at', maxPerLead: 2, horizonDays: 14 },
  };
}

/** Realistic callback phrases, as an assistant extracts them (English, German, ISO 8601). */
const CALLBACK_PHRASES = [
  'tomorrow at 3 pm',
  'morgen um 15 Uhr',
  'next Monday at 10am',
  'in 2 hours',
  'am Freitag um 9:30',
  '2026-01-08T15:00:00+01:00',
  '2026-01-09 11:00',
  'übermorgen nachmittags',
];

/** What the assistant "heard" on the call to lead i: every tenth lead alike, so every round sees the same mix. */
function extractedFor(i: number): Record<string, string> {
  switch (i % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
      return { interest: 'yes', reason: '' }; // rule 3: complete (and a variant success)
    case 4:
      return { interest: 'no', reason: 'wrong number' }; // rule 1: invalid
    case 5:
      return { interest: 'later', reason: '' }; // rule 2: move_to the second campaign
    case 6:
      return { interest: 'callback', reason: '', callback_at: CALLBACK_PHRASES[i % CALLBACK_PHRASES.length]! };
    default:
      return { interest: 'no', reason: '' }; // no rule: the retry settings (completed)
  }
}

interface RoundResult {
  kind: 'plain' | 'featured';
  placedRate: number;
  decidedRate: number;
  cpuMsPerCall: number;
  states: string;
  statements: StatementStat[] | null;
}

function cpuMs(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

async function newStack(kind: 'plain' | 'featured' | 'both', leads: number): Promise<BenchStack> {
  // The assistant id is known only once the simulator runs: the settings are filled in after.
  const stack = await startBenchStack({
    scale: SCALE,
    webhooks: true,
    callIdInResponse: true,
    campaigns:
      kind === 'plain'
        ? [{ leads, settings: { maxCallsInParallel: LIMIT } }]
        : kind === 'featured'
          ? [
              { leads, settings: { maxCallsInParallel: LIMIT, ...featured(1) } },
              { leads: 0, settings: { initialStatus: 'paused' } },
            ]
          : [
              { leads, settings: { maxCallsInParallel: LIMIT } },
              { leads: 0, settings: { initialStatus: 'paused' } },
              { leads, settings: { maxCallsInParallel: LIMIT, ...featured(1) } },
            ],
    outcomes: { human: 1, voicemail: 0, busy: 0, 'no-answer': 0, failed: 0 },
    callDurationSeconds: { min: 0, max: 0 },
    dialect,
  });
  if (stack.assistantId !== 1) throw new Error(`the simulator's outbound assistant is ${stack.assistantId}, the featured settings name 1`);
  // Through the simulator's own control, as a test would: what each number's call extracts.
  const numbers = kind === 'both' ? 2 * leads : leads;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < numbers) {
        const i = next++;
        const res = await fetch(`${stack.sim.url}/__sim/extracted`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ phone_number: benchPhone(i), variables: extractedFor(i % leads) }),
        });
        if (!res.ok) throw new Error(`POST /__sim/extracted: ${res.status} ${await res.text()}`);
      }
    }),
  );
  return stack;
}

/** True when every lead of the campaign left `pending`/`calling`, no call is live and no success awaits the call list's confirmation. */
async function allDecided(stack: BenchStack, campaignId: number): Promise<boolean> {
  const lead = await stack.db.selectFrom('leads').select('id').where('campaign_id', '=', campaignId).where('state', 'in', ['pending', 'calling']).limit(1).executeTakeFirst();
  if (lead) return false;
  const open = await stack.db
    .selectFrom('attempts')
    .select('id')
    .where('campaign_id', '=', campaignId)
    // A withdrawn attempt (claimed, never sent: the lead was judged again) is final too.
    .where((eb) => eb.or([eb('state', 'in', LIVE_ATTEMPT_STATES), eb.and([eb('state', '=', 'ended'), eb('outcome_source', '=', 'webhook')])]))
    .limit(1)
    .executeTakeFirst();
  return open === undefined;
}

async function leadStates(stack: BenchStack): Promise<string> {
  const rows = await stack.db.selectFrom('leads').select(['campaign_id', 'state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy(['campaign_id', 'state']).orderBy('campaign_id').orderBy('state').execute();
  return rows.map((r) => `campaign ${stack.campaignIds.indexOf(Number(r.campaign_id)) + 1} ${r.state} ${r.n}`).join(', ');
}

async function round(kind: 'plain' | 'featured'): Promise<RoundResult> {
  const stack = await newStack(kind, LEADS);
  try {
    const campaignId = stack.campaignIds[0]!;
    const cpu0 = process.cpuUsage();
    statements?.reset();
    const t0 = performance.now();
    const from = monotonicUs();
    await stack.startEngine();
    await waitFor(() => stack.sim.state.calls.size >= LEADS, 10 * 60_000, 5);
    const placed = (performance.now() - t0) / 1000;
    await waitFor(() => allDecided(stack, campaignId), 10 * 60_000, 5);
    const decided = (performance.now() - t0) / 1000;
    const cpu = cpuMs(cpu0);
    if (profiling) console.log(`    ${kind} round: --from ${from} --to ${monotonicUs()}`);
    const stats = statements ? statements.stats() : null;
    return { kind, placedRate: LEADS / placed, decidedRate: LEADS / decided, cpuMsPerCall: cpu / LEADS, states: await leadStates(stack), statements: stats };
  } finally {
    await stack.close();
  }
}

function printStatements(r: RoundResult): void {
  if (!r.statements) return;
  const total = r.statements.reduce((a, s) => a + s.count, 0);
  const ms = r.statements.reduce((a, s) => a + s.ms, 0);
  console.log(`  ${r.kind} round statements: ${fmt(total / LEADS, 1)} per call, ${fmt(ms / LEADS, 3)} ms per call (the bench's own done-checks among them)`);
  for (const s of r.statements.slice(0, 25)) {
    console.log(`    ${fmt(s.count / LEADS, 2).padStart(6)}/call ${fmt((s.ms * 1000) / LEADS, 0).padStart(5)} µs/call  ${s.sql.slice(0, 150)}`);
  }
}

// ---- 1. throughput, alternating rounds -------------------------------------------------
console.log(`${BENCH}: ${PAIRS} × (plain, featured) rounds of ${LEADS} leads, limit ${LIMIT} live calls, clock ×${SCALE}, ${dialectLabel(dialect)}${quick ? ' (quick)' : ''}`);
// A first pair, not counted: the code paths are compiled (JIT) during the first rounds of
// the process, and counting them made the first plain round ~2× slower than the next.
for (const kind of ['plain', 'featured'] as const) {
  const r = await round(kind);
  console.log(`  warm-up ${kind.padEnd(8)}: ${fmt(r.placedRate, 0)} calls placed/s (not counted)`);
}
const rounds: RoundResult[] = [];
for (let p = 0; p < PAIRS; p++) {
  for (const kind of ['plain', 'featured'] as const) {
    const r = await round(kind);
    rounds.push(r);
    console.log(`  round ${rounds.length} ${kind.padEnd(8)}: ${fmt(r.placedRate, 0)} calls placed/s, ${fmt(r.decidedRate, 0)} calls decided/s, ${fmt(r.cpuMsPerCall, 2)} ms CPU per call; leads: ${r.states}`);
  }
}
printStatements(rounds[rounds.length - 2]!);
printStatements(rounds[rounds.length - 1]!);
const of = (kind: 'plain' | 'featured', key: 'placedRate' | 'decidedRate'): number[] => rounds.filter((r) => r.kind === kind).map((r) => r[key]);
const median = (v: number[]): number => percentile(v, 0.5);
/** Each featured round against the plain round just before it (the pair ran side by side in time). */
const pairRatios = (key: 'placedRate' | 'decidedRate'): number[] => of('featured', key).map((f, i) => f / of('plain', key)[i]!);
const note = `${PAIRS} pairs of ${LEADS} calls, ${dialectLabel(dialect)}`;
reportFigure(BENCH, 'plain: calls placed/s (median of rounds)', median(of('plain', 'placedRate')), 'calls/s', undefined, note);
reportFigure(BENCH, 'featured: calls placed/s (median of rounds)', median(of('featured', 'placedRate')), 'calls/s', undefined, 'rules, 3 variants, budget');
reportFigure(BENCH, 'throughput ratio featured ÷ plain, placed (median of pairs)', median(pairRatios('placedRate')), '', atLeast(0.9, ''), `worst pair ${fmt(Math.min(...pairRatios('placedRate')), 2)}`);
const cpuOf = (kind: 'plain' | 'featured'): number[] => rounds.filter((r) => r.kind === kind).map((r) => r.cpuMsPerCall);
// The steadier figure on a shared machine: CPU per call moves less with the load than calls/s.
reportFigure(BENCH, 'CPU per call featured ÷ plain (median of rounds)', median(cpuOf('featured')) / median(cpuOf('plain')), '', undefined, `${fmt(median(cpuOf('plain')), 2)} → ${fmt(median(cpuOf('featured')), 2)} ms (engine + client + simulator)`);
reportFigure(BENCH, 'throughput ratio featured ÷ plain, decided (median of pairs)', median(pairRatios('decidedRate')), '', atLeast(0.9, ''), `worst pair ${fmt(Math.min(...pairRatios('decidedRate')), 2)}; until every outcome is final`);

// ---- 2. the cost of deciding one outcome ----------------------------------------------
const dstack = await newStack('both', DECISIONS);
try {
  const [plainId, , featuredId] = dstack.campaignIds as [number, number, number];
  const campaigns = new Map<number, RuntimeCampaign>();
  for (const id of dstack.campaignIds) campaigns.set(id, runtimeCampaign((await getCampaignById(dstack.db, id))!));
  const ctx = {
    db: dstack.db,
    logger: undefined as never,
    commit: undefined as never,
    now: () => dstack.clock.now(),
    campaign: (id: number) => campaigns.get(id),
    onSlotFreed: () => undefined,
    results: { keepTranscripts: true, serverTimezone: 'UTC' },
  } satisfies OutcomeContext;
  const featuredCampaign = campaigns.get(featuredId)!;
  const variants = featuredCampaign.config.variants!;

  // Every lead claimed (in batches, as the dial loop claims) before anything is timed.
  const leads = await dstack.db.selectFrom('leads').select(['id', 'campaign_id', 'phone_number']).where('campaign_id', 'in', [plainId, featuredId]).orderBy('id').execute();
  const attempts = new Map<number, AttemptRow[]>([
    [plainId, []],
    [featuredId, []],
  ]);
  for (let i = 0; i < leads.length; i += 100) {
    const batch = leads.slice(i, i + 100).map((l) => ({
      campaignId: Number(l.campaign_id),
      leadId: Number(l.id),
      contactPosition: 0,
      phoneNumber: l.phone_number,
      assistantId: dstack.assistantId,
      owner: 'bench-engine',
      now: dstack.clock.now(),
    }));
    const results = await claimAttempts(dstack.db, batch, dstack.fenceToken !== null ? { fenceToken: dstack.fenceToken } : {});
    for (const r of results) if (r.ok) attempts.get(r.attempt.campaign_id)!.push(r.attempt);
  }
  const plainAttempts = attempts.get(plainId)!;
  const featuredAttempts = attempts.get(featuredId)!;
  if (plainAttempts.length !== DECISIONS || featuredAttempts.length !== DECISIONS) throw new Error(`claimed ${plainAttempts.length} + ${featuredAttempts.length} attempts, wanted ${DECISIONS} each`);

  /** The call list's word on the i-th call: final, who answered, what was extracted, its cost. */
  const observation = (a: AttemptRow, i: number) => ({
    callId: `bench-${a.id}`,
    status: 'completed',
    answeredBy: 'human',
    endedAt: dstack.clock.now(),
    source: 'poll' as const,
    given: { id: `bench-${a.id}`, status: 'completed', answered_by: 'human', duration: 42, cost: 0.1, transcript: 'AI: Hi.\nuser: Hi.', extracted_variables: extractedFor(i) },
  });
  const record = async (a: AttemptRow, i: number): Promise<void> => {
    const applied = await dstack.db.transaction().execute((trx) => applyObservation(trx, ctx, a, observation(a, i)));
    if (applied.result !== 'ended') throw new Error(`attempt ${a.id}: ${applied.result}, not ended`);
  };
  const plainMs: number[] = [];
  const featuredMs: number[] = [];
  const callbackMs: number[] = [];
  const variantMs: number[] = [];
  const budgetMs: number[] = [];
  // chrono-node builds its parsers on first use (~200 ms, once per process): not a per-outcome cost.
  for (const phrase of CALLBACK_PHRASES) readCallbackTime(phrase, { reference: dstack.clock.now(), zone: 'Europe/Berlin', horizonDays: 14 });
  // --statements: each side's statements per outcome, counted around its transaction alone.
  const sideStatements = { plain: new Map<string, StatementStat>(), featured: new Map<string, StatementStat>() };
  const counted = async (side: 'plain' | 'featured', work: () => Promise<void>): Promise<void> => {
    statements?.reset();
    await work();
    for (const st of statements?.stats() ?? []) {
      const into = sideStatements[side].get(st.sql) ?? { sql: st.sql, count: 0, ms: 0, max: 0 };
      sideStatements[side].set(st.sql, { sql: st.sql, count: into.count + st.count, ms: into.ms + st.ms, max: Math.max(into.max, st.max) });
    }
  };
  const plainOne = async (i: number): Promise<void> => {
    const t0 = performance.now();
    await counted('plain', () => record(plainAttempts[i]!, i));
    plainMs.push(performance.now() - t0);
  };
  const featuredOne = async (i: number): Promise<void> => {
    // Per claim and per dial pass, not per outcome: timed apart, reported beside.
    const a = featuredAttempts[i]!;
    let t0 = performance.now();
    await settleLeadVariants(dstack.db, [{ leadId: a.lead_id, variant: pickVariant(variants, a.lead_id).name }], variants.map((v) => v.name));
    const t1 = performance.now();
    await readBudgetFacts(dstack.db, featuredCampaign, dstack.clock.now());
    const t2 = performance.now();
    variantMs.push(t1 - t0);
    budgetMs.push(t2 - t1);

    // A callback phrase read alone, timed apart: inside the decision only the calls that
    // asked a time read one (one in ten here, extractedFor).
    t0 = performance.now();
    const reading = readCallbackTime(CALLBACK_PHRASES[i % CALLBACK_PHRASES.length], { reference: dstack.clock.now(), zone: 'Europe/Berlin', horizonDays: 14 });
    callbackMs.push(performance.now() - t0);
    if (!reading.ok) throw new Error(`"${reading.asked}" was not read: ${reading.reason}`);

    // The decision itself, as the engine makes it: rules, callbacks and the outcome's transaction.
    const t3 = performance.now();
    await counted('featured', () => record(a, i));
    const t4 = performance.now();
    featuredMs.push(t4 - t3);
  };
  // Which of the two goes first alternates too: neither always follows the other's commit.
  for (let i = 0; i < DECISIONS; i++) {
    if (i % 2 === 0) {
      await plainOne(i);
      await featuredOne(i);
    } else {
      await featuredOne(i);
      await plainOne(i);
    }
  }
  for (const side of ['plain', 'featured'] as const) {
    if (!statements) break;
    const list = [...sideStatements[side].values()].sort((x, y) => y.ms - x.ms);
    console.log(`  ${side} outcome's statements: ${fmt(list.reduce((a, x) => a + x.count, 0) / DECISIONS, 1)} per outcome, ${fmt(list.reduce((a, x) => a + x.ms, 0) / DECISIONS, 3)} ms`);
    for (const st of list.slice(0, 15)) console.log(`    ${fmt(st.count / DECISIONS, 2).padStart(6)}/outcome ${fmt((st.ms * 1000) / DECISIONS, 0).padStart(5)} µs/outcome  ${st.sql.slice(0, 140)}`);
  }
  const p = summary(plainMs);
  const f = summary(featuredMs);
  const cb = summary(callbackMs);
  console.log(`  one outcome recorded, plain:    p50 ${fmt(p.p50, 3)} ms, p99 ${fmt(p.p99, 3)} ms, max ${fmt(p.max, 2)} ms`);
  console.log(`  one outcome recorded, featured: p50 ${fmt(f.p50, 3)} ms, p99 ${fmt(f.p99, 3)} ms, max ${fmt(f.max, 2)} ms (rules, callbacks: one call in ten asks a time)`);
  const part = (label: string, v: number[]): void => {
    const s = summary(v);
    console.log(`    ${label.padEnd(34)} p50 ${fmt(s.p50, 3)} ms, p99 ${fmt(s.p99, 3)} ms, max ${fmt(s.max, 2)} ms`);
  };
  part(`readCallbackTime alone (${CALLBACK_PHRASES.length} phrases)`, callbackMs);
  part('not per outcome: settleLeadVariants', variantMs);
  part('not per outcome: readBudgetFacts', budgetMs);
  console.log(`  leads (1 plain, 2 the move_to target, 3 featured): ${await leadStates(dstack)}`);
  const dnote = `${DECISIONS} outcomes each, alternating, ${dialectLabel(dialect)}`;
  reportFigure(BENCH, 'decide one outcome, plain, p99', p.p99, 'ms', undefined, dnote);
  reportFigure(BENCH, 'decide one outcome, featured, p99', f.p99, 'ms', undefined, 'rules (invalid, move_to, complete), callbacks (one call in ten asks a time)');
  reportFigure(BENCH, 'readCallbackTime p99', cb.p99, 'ms', undefined, 'one phrase read alone; inside the featured decision for the calls that ask a time');
  reportFigure(BENCH, 'budget read (once per dial pass) p99', summary(budgetMs).p99, 'ms', undefined, `p50 ${fmt(summary(budgetMs).p50, 3)} ms; in the throughput figures`);
  reportFigure(BENCH, 'variant settled (once per claim) p99', summary(variantMs).p99, 'ms', undefined, `p50 ${fmt(summary(variantMs).p50, 3)} ms; in the throughput figures`);
  reportFigure(BENCH, 'decision cost added by the features, p99', f.p99 - p.p99, 'ms', atMost(1, 'ms'), `p50 +${fmt(f.p50 - p.p50, 3)} ms`);
} finally {
  await dstack.close();
}

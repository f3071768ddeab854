// The in-process campaignd stack the engine benchmarks run: the simulator, a SQLite file
// (or a PostgreSQL database: `dialect`, bench-db.ts),
// the real service client (every HTTP exchange counted through onRequest), the engine and
// the daemon's real HTTP surface for webhooks — all on ONE clock, usually sped up.
// Like test/helpers/stack.ts, but it exposes what benchmarks need: request counts, the
// instants webhooks arrived, and a high rate budget.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../../src/config/types.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { createMetrics } from '../../src/http/metrics.js';
import { startHttpServer } from '../../src/http/server.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient, type ServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { OutcomeName } from '../../src/simulator/types.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { takeLease } from '../../src/store/lease.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';
import { scaledClock, systemClock, type Clock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../../test/helpers/campaign-config.js';
import { benchTarget, type BenchDialect } from './bench-db.js';

/** Monday 2026-01-05 10:00 UTC: simulated time starts here. */
export const ORIGIN = Date.UTC(2026, 0, 5, 10, 0, 0);
const TOKEN = 'bench-token-0123456789abcdef';
const SECRET = 'bench-webhook-secret-0123456789';
/** High enough that the client's rate budget never shapes a benchmark. */
export const HIGH_BUDGET = { requestsPerMinute: 1e9, burst: 1e6 };

export interface BenchStackOptions {
  /** Simulated ms per real ms (1 = real time). */
  scale: number;
  campaigns: { leads: number; settings?: Partial<CampaignConfig> }[];
  webhooks: boolean;
  outcomes?: Partial<Record<OutcomeName, number>>;
  callDurationSeconds: { min: number; max: number };
  callIdInResponse?: boolean;
  accountMaxCalls?: number;
  seed?: number;
  /** The client's rate budget; default HIGH_BUDGET (never shapes a run). */
  rateLimit?: { requestsPerMinute: number; burst: number };
  /** The store's database (default sqlite: a file in the stack's temp folder). */
  dialect?: BenchDialect;
}

export interface BenchStack {
  clock: Clock;
  scale: number;
  sim: RunningSimulator;
  client: ServiceClient;
  db: Kysely<Database>;
  campaignIds: number[];
  assistantId: number;
  /** HTTP exchanges the client made, by endpoint (counted from `resetCounts()`). */
  requests: Map<string, number>;
  resetCounts(): void;
  /** Simulated instants at which webhook deliveries reached the daemon, in order. */
  webhookArrivals: number[];
  /** Call id → simulated instant its first applied webhook arrived. */
  webhookAppliedAt: Map<string, number>;
  /** The lease's fencing token claims are made under (PostgreSQL); null on SQLite. */
  fenceToken: number | null;
  startEngine(): Promise<Engine>;
  close(): Promise<void>;
}

/** A campaign config for the benches: the tests' (every day, all day, UTC), 10 calls at once, no retries. */
export function benchCampaign(name: string, assistantId: number, settings: Partial<CampaignConfig> = {}): CampaignConfig {
  return testCampaignConfig(name, { file: `/bench/${name}.yaml`, assistantId, maxCallsInParallel: 10, maxRetries: 0, ...settings });
}

/** The i-th distinct German mobile number (valid for libphonenumber). */
export function benchPhone(i: number): string {
  return `+4915${100_000_000 + i}`;
}

/** Builds the stack; the engine starts only with `startEngine()`, so set-up is not measured. */
export async function startBenchStack(opts: BenchStackOptions): Promise<BenchStack> {
  const clock = opts.scale === 1 ? systemClock : scaledClock(opts.scale, ORIGIN);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-engine-'));
  const logger = silentLogger();
  const closers: (() => Promise<unknown>)[] = [async () => fs.rmSync(dir, { recursive: true, force: true })];
  const close = async (): Promise<void> => {
    for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
  };
  try {
    const sim = await startSimulator({
      clock,
      networkClock: systemClock,
      tokens: [TOKEN],
      seed: opts.seed ?? 7,
      callIdInResponse: opts.callIdInResponse ?? false,
      ...(opts.outcomes ? { outcomes: opts.outcomes } : {}),
      callDurationSeconds: opts.callDurationSeconds,
    });
    closers.push(() => sim.close());
    const requests = new Map<string, number>();
    const client = createServiceClient({
      baseUrl: sim.url,
      getToken: () => TOKEN,
      clock,
      logger,
      serverTimezone: 'UTC',
      requestTimeoutMs: 10_000,
      rateLimit: opts.rateLimit ?? HIGH_BUDGET,
      onRequest: (e) => requests.set(e.endpoint, (requests.get(e.endpoint) ?? 0) + 1),
    });
    closers.push(() => client.close());
    const target = await benchTarget(opts.dialect ?? 'sqlite', path.join(dir, 'campaignd.db'));
    closers.push(() => target.drop());
    const store = await target.open();
    closers.push(() => store.close());
    const { db } = store;
    await migrateToLatest(db, { clock });
    // On PostgreSQL the daemon claims as the lease's holder, each claim fenced by its token
    // (checked by a trigger); one engine alone holds it for the whole run.
    const fenceToken = store.dialect === 'postgres' ? await takeLease(db, 'bench-engine', 3_600_000) : null;

    const assistantId = Number((await client.listOutboundAssistants())[0]?.id);
    const campaignIds: number[] = [];
    let phoneOffset = 0;
    for (const [i, spec] of opts.campaigns.entries()) {
      const config = benchCampaign(`bench-${i + 1}`, assistantId, spec.settings);
      const row = await upsertCampaign(db, config, { timezone: 'UTC' }, clock.now());
      campaignIds.push(row.id);
      await importLeads(db, { id: row.id, allowDuplicates: false }, leadRows(phoneOffset, spec.leads), { now: clock.now(), sourceFile: `/bench/${row.name}.csv` });
      phoneOffset += spec.leads;
    }

    let engine: Engine | null = null;
    const webhookArrivals: number[] = [];
    const webhookAppliedAt = new Map<string, number>();
    const http = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      metrics: createMetrics(),
      clock,
      ready: async () => ({ ok: true, checks: {} }),
      webhook: {
        secret: () => SECRET,
        handle: async (payload, receivedAt) => {
          const at = clock.now();
          webhookArrivals.push(at);
          if (!engine) return { accepted: false, detail: 'engine not running' };
          const result = await engine.handleWebhook(payload, receivedAt);
          const id = (payload as { id?: unknown } | null)?.id;
          if (result.accepted && id !== undefined && !webhookAppliedAt.has(String(id))) webhookAppliedAt.set(String(id), at);
          return result;
        },
      },
    });
    closers.push(() => http.close());
    if (opts.webhooks) {
      await client.updateAssistant(assistantId, {
        is_webhook_active: true,
        webhook_url: `http://127.0.0.1:${http.port}/webhooks/post-call?secret=${SECRET}`,
      });
    }
    requests.clear();

    return {
      clock,
      scale: opts.scale,
      sim,
      client,
      db,
      campaignIds,
      assistantId,
      requests,
      resetCounts: () => requests.clear(),
      webhookArrivals,
      webhookAppliedAt,
      fenceToken,
      async startEngine() {
        const e = createEngine({
          db,
          client: engineClientFrom(client),
          clock,
          logger,
          instanceId: 'bench-engine',
          ...(opts.accountMaxCalls !== undefined ? { accountMaxCalls: opts.accountMaxCalls } : {}),
          settleSeconds: 180,
          serverTimezone: 'UTC',
          webhooksEnabled: opts.webhooks,
          ...(fenceToken !== null
            ? {
                lease: {
                  holds: () => true,
                  token: () => fenceToken,
                  lost: () => {
                    throw new Error('the benchmark engine lost its lease');
                  },
                },
              }
            : {}),
        });
        await e.start();
        engine = e;
        // The engine stops first on close, before the store and the simulator it uses.
        closers.push(() => e.stop(2_000));
        return e;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function* leadRows(offset: number, count: number): AsyncGenerator<ReadLeadResult> {
  for (let i = 0; i < count; i++) {
    yield { ok: true, line: i + 2, lead: { phoneNumber: benchPhone(offset + i), secondary: [], variables: { name: `lead ${i}` } } };
  }
}

/** Resolves when `check()` is true, looking every `everyMs` real ms; rejects after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`gave up waiting after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** True when no lead is pending, calling or waiting for a retry, and no attempt is live. */
export async function campaignDone(db: Kysely<Database>): Promise<boolean> {
  const lead = await db.selectFrom('leads').select('id').where('state', 'in', ['pending', 'calling', 'retry-scheduled']).limit(1).executeTakeFirst();
  if (lead) return false;
  const live = await db.selectFrom('attempts').select('id').where('state', 'in', ['dialing', 'placed', 'unknown']).limit(1).executeTakeFirst();
  return live === undefined;
}

/** Waits until the campaign is done; on timeout, fails with lead and attempt counts by state. */
export async function waitForDone(db: Kysely<Database>, timeoutMs: number): Promise<void> {
  try {
    await waitFor(() => campaignDone(db), timeoutMs, 20);
  } catch {
    const leads = await db.selectFrom('leads').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    const attempts = await db.selectFrom('attempts').select(['state', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('state').execute();
    const show = (rows: { state: string; n: number }[]): string => rows.map((r) => `${r.state} ${r.n}`).join(', ');
    throw new Error(`campaign not done after ${timeoutMs} ms: leads ${show(leads)}; attempts ${show(attempts)}`);
  }
}

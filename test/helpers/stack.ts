// An in-process campaignd stack for engine tests: the simulator, a real SQLite store, the
// real service client and the engine, all on ONE sped-up clock, so a campaign of
// minute-long calls runs in a second or two. Webhooks reach the engine through the
// daemon's real HTTP surface (startHttpServer), exactly as in production.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../../src/config/types.js';
import { createEngine, type Engine, type EngineMetrics } from '../../src/engine/engine.js';
import { createPredialPost } from '../../src/engine/predial-post.js';
import type { EngineClient } from '../../src/engine/ports.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { createMetrics } from '../../src/http/metrics.js';
import { startHttpServer, type HttpServerHandle } from '../../src/http/server.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { createServiceClient, type RequestEvent, type ServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import type { OutcomeName, SimCall } from '../../src/simulator/types.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openStore } from '../../src/store/open-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';
import { scaledClock, systemClock, type Clock } from '../../src/time/clock.js';
import { assertAllRules, type CampaignUnderTest } from './invariants.js';
import { describeProgress, isQuiet } from './progress.js';
import { createTestDatabase, testDialect } from './test-store.js';
import { waitUntil } from './wait.js';
import { testCampaignConfig } from './campaign-config.js';
import { createApi } from '../../src/api/api.js';
import type { ApiDeps } from '../../src/api/deps.js';
import { apiRoutes } from '../../src/api/routes/index.js';

export { waitUntil } from './wait.js';
export { describeProgress, isQuiet } from './progress.js';

/** Monday 2026-01-05 10:00 UTC: the default start of simulated time. */
export const DEFAULT_ORIGIN = Date.UTC(2026, 0, 5, 10, 0, 0);
export const WEBHOOK_SECRET = 'stack-webhook-secret-0123456789';
const TOKEN = 'stack-token-0123456789abcdef';

/** One lead: its primary number, secondary contacts in order, and its zone. */
export interface LeadSpec {
  phone: string;
  secondary?: string[];
  timezone?: string;
}

/** A campaign of the stack; settings override a whole-day, every-day UTC window. */
export interface CampaignSpec {
  name?: string;
  settings?: Partial<Omit<CampaignConfig, 'name' | 'file' | 'assistantId'>>;
  leads: LeadSpec[];
  /** Numbers the service will refuse (400): the checks expect no call to them. */
  rejected?: string[];
}

/** A `/__sim/outcomes` body. */
export interface FixedOutcomeSpec {
  phone_number: string;
  status: string;
  answered_by?: 'human' | 'machine' | 'unknown' | null;
  duration?: number;
  count?: number;
}

export interface StackOptions {
  campaigns: CampaignSpec[];
  /** Simulated ms per real ms (default 400). */
  scale?: number;
  /** Simulated start instant (default DEFAULT_ORIGIN). */
  origin?: number;
  /** A clock to use instead of scaledClock(scale, origin) (the time harness brings its own). */
  clock?: Clock;
  /** The simulator posts post-call webhooks to the daemon's HTTP surface (default true). */
  webhooks?: boolean;
  outcomes?: Partial<Record<OutcomeName, number>>;
  callDurationSeconds?: { min: number; max: number };
  callIdInResponse?: boolean;
  seed?: number;
  /** The simulator's own per-token rate limit (429 with Retry-After), in simulated time. */
  rateLimit?: { perMinute: number; burst: number; burstWindowSeconds: number; lockoutSeconds?: number };
  /** Account-wide cap (daemon max_calls_in_parallel). */
  accountMaxCalls?: number;
  settleSeconds?: number;
  /** `/__sim/faults` bodies set before the engine starts. */
  faults?: Record<string, unknown>[];
  fixedOutcomes?: FixedOutcomeSpec[];
  /** A SQLite database file (for restart tests); default: a fresh temp file, or a fresh database on the PostgreSQL run. */
  dbFile?: string;
  /** Start the engine at once (default true). */
  startEngine?: boolean;
  /** The engine's logger (default: silent); tests pass one to read its lines. */
  logger?: Logger;
  /** The client's request timeout in real ms (default 10 000). */
  requestTimeoutMs?: number;
  /** SQLite busy timeout of the stack's connection, in real ms (default 5000). */
  busyTimeoutMs?: number;
  /** Wraps the engine's client (e.g. to hold a make_call answer back). */
  wrapClient?: (client: EngineClient) => EngineClient;
  /** Serve the API (/api/v1) on the stack's HTTP surface; `authorize` defaults to letting every request through. */
  /** `readOnlyConnection`: the GET routes read on a read-only connection of their own (SQLite), as the daemon's do. */
  /** `onWake`: told each time the API wakes the engine; `onLeadsStored`: the new rows of each POST (ApiDeps.leadsStored). */
  api?: boolean | { authorize?: ApiDeps['authorize']; readOnlyConnection?: boolean; onWake?: () => void; onLeadsStored?: (count: number) => void };
  /** Pre-dial checks over real HTTP (src/engine/predial-post.ts), with these secrets by variable name. */
  predialSecrets?: Record<string, string>;
  /** What the engine reports to (default: nothing). */
  metrics?: EngineMetrics;
}

/** A running stack; `close()` releases everything (call it in afterEach). */
export interface Stack {
  clock: Clock;
  sim: RunningSimulator;
  db: Kysely<Database>;
  /** The store's file, or its PostgreSQL URL on the PostgreSQL run (openStore opens either). */
  dbFile: string;
  client: ServiceClient;
  engineClient: EngineClient;
  engine: Engine | null;
  assistantId: number;
  campaigns: CampaignUnderTest[];
  webhookUrl: string;
  /** The HTTP surface's base URL (`http://127.0.0.1:PORT`): the API is under /api/v1 when `api` was asked for. */
  httpUrl: string;
  /** Every service request the client made, in order (endpoint, HTTP status, error kind). */
  requests: RequestEvent[];
  /** Starts a fresh engine on the same database (a restart after a crash). */
  startEngine(): Promise<Engine>;
  /** Stops the engine (in-flight requests get `graceMs`). */
  stopEngine(graceMs?: number): Promise<void>;
  /** Every call the simulator placed, by id. */
  simCalls(): SimCall[];
  /** POSTs a `/__sim/…` control and returns the JSON answer (fails on non-2xx). */
  control(pathname: string, body?: unknown): Promise<unknown>;
  /** Runs every rule of invariants.ts over the simulator's calls and the final states. */
  assertAllRules(): Promise<void>;
  /** Resolves when every lead is final, no attempt is live and no webhook success awaits a poll. */
  waitForQuiet(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The campaign file a spec stands for (every day, all day, UTC, unless overridden). */
export function campaignConfigFor(spec: CampaignSpec, index: number, assistantId: number): CampaignConfig {
  return testCampaignConfig(spec.name ?? `campaign-${index + 1}`, { assistantId, ...spec.settings });
}

/** `count` distinct E.164 numbers that are not the simulator's own (+1 202 555 …). */
export function phoneNumbers(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, i) => `+1202555${String(1000 + offset + i).padStart(4, '0')}`);
}

/** `/__sim/outcomes` bodies that make every call to these numbers a short human-answered success. */
export function allSucceed(numbers: readonly string[], duration = 20): FixedOutcomeSpec[] {
  return numbers.map((phone_number) => ({ phone_number, status: 'completed', answered_by: 'human', duration }));
}

/** Builds and starts a stack. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const clock = opts.clock ?? scaledClock(opts.scale ?? 400, opts.origin ?? DEFAULT_ORIGIN);
  const pgDatabase = !opts.dbFile && testDialect === 'postgres' ? await createTestDatabase() : null;
  const tmpDir = opts.dbFile || pgDatabase ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-engine-'));
  const dbFile = opts.dbFile ?? pgDatabase?.url ?? path.join(tmpDir!, 'campaignd.db');
  const logger = opts.logger ?? silentLogger();
  const closers: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
  };

  const requests: RequestEvent[] = [];
  try {
    const sim = await startSimulator({
      clock,
      networkClock: systemClock,
      tokens: [TOKEN],
      seed: opts.seed ?? 11,
      callIdInResponse: opts.callIdInResponse ?? false,
      rateLimit: opts.rateLimit ?? null,
      ...(opts.outcomes ? { outcomes: opts.outcomes } : {}),
      callDurationSeconds: opts.callDurationSeconds ?? { min: 20, max: 120 },
    });
    closers.push(() => sim.close());
    const client = createServiceClient({
      baseUrl: sim.url,
      getToken: () => TOKEN,
      clock,
      logger,
      serverTimezone: 'UTC',
      // Real-time request timeouts: generous, so a busy CI box never turns an answer into "unknown".
      requestTimeoutMs: opts.requestTimeoutMs ?? 10_000,
      onRequest: (e) => requests.push(e),
    });
    closers.push(() => client.close());
    const baseEngineClient = engineClientFrom(client);
    const engineClient = opts.wrapClient ? opts.wrapClient(baseEngineClient) : baseEngineClient;

    const store: DatabaseHandle = await openStore(dbFile, opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {});
    closers.push(async () => {
      await store.close();
      if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
      await pgDatabase?.drop();
    });
    const { db } = store;
    await migrateToLatest(db, { clock });

    const assistantId = Number((await client.listOutboundAssistants())[0]?.id);
    const campaigns: Stack['campaigns'] = [];
    for (const [i, spec] of opts.campaigns.entries()) {
      const config = campaignConfigFor(spec, i, assistantId);
      const row = await upsertCampaign(db, config, { timezone: config.timezone ?? 'UTC' }, clock.now());
      const leads = spec.leads.map((l) => ({ contacts: [l.phone, ...(l.secondary ?? [])], ...(l.timezone ? { timezone: l.timezone } : {}) }));
      campaigns.push({ id: row.id, name: row.name, config, leads, ...(spec.rejected ? { rejected: new Set(spec.rejected) } : {}) });
      await importLeads(db, { id: row.id, allowDuplicates: false }, leadRows(spec.leads), { now: clock.now(), sourceFile: `/test/leads/${row.name}.csv` });
    }

    let engine: Engine | null = null;
    const apiOptions = opts.api === true ? {} : opts.api || null;
    const readStore = apiOptions?.readOnlyConnection && store.dialect === 'sqlite' ? await openStore(dbFile, { readonly: true }) : null;
    if (readStore) closers.push(() => readStore.close());
    const http: HttpServerHandle = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      metrics: createMetrics(),
      clock,
      ready: async () => ({ ok: true, checks: {} }),
      webhook: {
        secret: () => WEBHOOK_SECRET,
        handle: async (payload, receivedAt) => {
          if (!engine) return { accepted: false, detail: 'engine not running' };
          return engine.handleWebhook(payload, receivedAt);
        },
      },
      ...(apiOptions
        ? {
            api: createApi(
              {
                db,
                ...(readStore ? { readDb: readStore.db } : {}),
                clock,
                logger,
                wake: () => {
                  apiOptions.onWake?.();
                  engine?.wake();
                },
                ...(apiOptions.onLeadsStored ? { leadsStored: (_campaignId: number, n: number) => apiOptions.onLeadsStored!(n) } : {}),
                authorize: apiOptions.authorize ?? (async () => ({ ok: true, keyName: null })),
                version: 'test',
                hostname: os.hostname(),
                isPidAlive: () => true,
              },
              apiRoutes,
            ),
          }
        : {}),
    });
    closers.push(() => http.close());
    const webhookUrl = `http://127.0.0.1:${http.port}/webhooks/post-call?secret=${WEBHOOK_SECRET}`;
    const webhooks = opts.webhooks ?? true;
    if (webhooks) await client.updateAssistant(assistantId, { is_webhook_active: true, webhook_url: webhookUrl });

    const control = async (pathname: string, body: unknown = {}): Promise<unknown> => {
      const res = await fetch(`${sim.url}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json: unknown = await res.json();
      if (!res.ok) throw new Error(`${pathname} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    for (const f of opts.faults ?? []) await control('/__sim/faults', f);
    for (const o of opts.fixedOutcomes ?? []) await control('/__sim/outcomes', o);

    const predial = opts.predialSecrets ? createPredialPost() : null;
    if (predial) closers.push(() => predial.close());
    let engineCount = 0;
    const stack: Stack = {
      clock,
      sim,
      db,
      dbFile,
      client,
      engineClient,
      engine: null,
      assistantId,
      campaigns,
      webhookUrl,
      httpUrl: `http://127.0.0.1:${http.port}`,
      requests,
      async startEngine() {
        await stack.stopEngine();
        engineCount++;
        const e = createEngine({
          db,
          client: engineClient,
          clock,
          logger,
          instanceId: `test-engine-${engineCount}`,
          ...(opts.accountMaxCalls !== undefined ? { accountMaxCalls: opts.accountMaxCalls } : {}),
          settleSeconds: opts.settleSeconds ?? 180,
          serverTimezone: 'UTC',
          webhooksEnabled: webhooks,
          ...(predial ? { predial: { post: predial.post, secret: (name: string) => opts.predialSecrets?.[name] } } : {}),
          ...(opts.metrics ? { metrics: opts.metrics } : {}),
        });
        await e.start();
        engine = e;
        stack.engine = e;
        return e;
      },
      async stopEngine(graceMs = 10_000) {
        const e = engine;
        engine = null;
        stack.engine = null;
        if (e) await e.stop(graceMs);
      },
      simCalls: () => [...sim.state.calls.values()].sort((a, b) => a.id - b.id),
      control,
      async waitForQuiet(timeoutMs = 20_000) {
        // Read in one transaction: on the stack's one connection no commit of the engine
        // falls between the reads (a lead read final before a poll revised it, and its
        // attempt read after, looked quiet). With the engine running, quiet also means
        // each running campaign whose leads are all final was completed: the engine does
        // that a few queries after the last outcome, which on PostgreSQL is later than a
        // test's next read.
        const settled = () =>
          db.transaction().execute(async (trx) => {
            if (!(await isQuiet(trx))) return false;
            if (!engine) return true;
            const completing = campaigns.filter((c) => c.config.markCompleteWhenNoLeads).map((c) => c.id);
            if (completing.length === 0) return true;
            const due = await trx
              .selectFrom('campaigns')
              .select('id')
              .where('id', 'in', completing)
              .where('state', '=', 'running')
              .where((eb) => eb.exists(eb.selectFrom('leads').select('leads.id').whereRef('leads.campaign_id', '=', 'campaigns.id')))
              .limit(1)
              .executeTakeFirst();
            return due === undefined;
          });
        await waitUntil(settled, { timeoutMs, message: () => describeProgress(db) });
      },
      assertAllRules: () => assertAllRules(db, stack.simCalls(), campaigns, { now: clock.now(), ...(opts.accountMaxCalls !== undefined ? { accountMaxCalls: opts.accountMaxCalls } : {}) }),
      close,
    };
    // The engine goes first on close, before the store and the simulator it uses.
    // In simulated ms: generous, and over as soon as in-flight make_call requests are answered.
    closers.push(() => stack.stopEngine(3_600_000));
    if (opts.startEngine ?? true) await stack.startEngine();
    return stack;
  } catch (err) {
    await close();
    throw err;
  }
}

async function* leadRows(leads: LeadSpec[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const l of leads) {
    line++;
    yield { ok: true, line, lead: { phoneNumber: l.phone, secondary: l.secondary ?? [], ...(l.timezone ? { timezone: l.timezone } : {}), variables: { name: `lead ${line}` } } };
  }
}

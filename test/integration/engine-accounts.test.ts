// Many accounts in one daemon (README, "Many accounts"), through the real simulator with one
// token per account (each with its own assistants and its own limiter), the real service
// clients and one store: a revoked token stops only its account's campaigns, each account's
// rate budget is its own, and a post-call webhook is matched to the account through the call.
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineMetrics } from '../../src/engine/engine-types.js';
import { createAccountEngines, type AccountEngines } from '../../src/engine/accounts.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient, type ServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { postCallPayload } from '../../src/simulator/webhook-sender.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { scaledClock, systemClock, type Clock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { DEFAULT_ORIGIN, phoneNumbers } from '../helpers/stack.js';
import { openTestStore } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { installStatementLog } from '../../bench/lib/statement-log.js';

const TOKENS = { a: 'accounts-token-a-0123456789', b: 'accounts-token-b-0123456789' } as const;
type Name = keyof typeof TOKENS;
/** The live service's limiter: 20 per 10 s and 100 per minute, per token. */
const LIVE_LIMIT = { perMinute: 100, burst: 20, burstWindowSeconds: 10, lockoutSeconds: 60 };

interface AccountsRig {
  clock: Clock;
  sim: RunningSimulator;
  store: DatabaseHandle;
  clients: Record<Name, ServiceClient>;
  assistants: Record<Name, number>;
  campaigns: Record<Name, number>;
  engines: AccountEngines;
  /** The simulator's calls of one account (its token's user), in order. */
  calls(name: Name): { created: number; phone: string; id: number }[];
  close(): Promise<void>;
}

let rig: AccountsRig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

async function* leadRows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const phone of phones) yield { ok: true, line: ++line, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

/** Two accounts, a and b, each with one campaign of `leads` numbers, dialed by one daemon. */
async function startRig(opts: { leads: number; maxCalls: number; durationSeconds: number; scale?: number; pollIntervalMs?: number; metrics?: EngineMetrics }): Promise<AccountsRig> {
  const clock = scaledClock(opts.scale ?? 200, DEFAULT_ORIGIN);
  const closers: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
  };
  try {
    const sim = await startSimulator({
      clock,
      networkClock: systemClock,
      tokens: [TOKENS.a, TOKENS.b],
      seed: 5,
      callIdInResponse: true,
      rateLimit: LIVE_LIMIT,
      outcomes: { human: 1 },
      callDurationSeconds: { min: opts.durationSeconds, max: opts.durationSeconds },
    });
    closers.push(() => sim.close());
    const clientOf = (name: Name): ServiceClient => {
      const c = createServiceClient({
        baseUrl: sim.url,
        getToken: () => TOKENS[name],
        clock,
        logger: silentLogger(),
        serverTimezone: 'UTC',
        requestTimeoutMs: 10_000,
        rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 },
      });
      closers.push(() => c.close());
      return c;
    };
    const clients = { a: clientOf('a'), b: clientOf('b') };
    const store = await openTestStore();
    closers.push(() => store.close());
    await migrateToLatest(store.db, { clock });
    const assistants = {} as Record<Name, number>;
    const campaigns = {} as Record<Name, number>;
    for (const [i, name] of (['a', 'b'] as const).entries()) {
      // Each token sees only its own assistants.
      assistants[name] = Number((await clients[name].listOutboundAssistants())[0]?.id);
      const config = testCampaignConfig(`campaign-${name}`, { assistantId: assistants[name], account: name, maxCallsInParallel: opts.maxCalls, maxRetries: 0 });
      const row = await upsertCampaign(store.db, config, { timezone: 'UTC' }, clock.now());
      campaigns[name] = row.id;
      await importLeads(store.db, { id: row.id, allowDuplicates: false }, leadRows(phoneNumbers(opts.leads, i * 5000)), { now: clock.now(), sourceFile: `/test/${name}.csv` });
    }
    expect(assistants.a).not.toBe(assistants.b);
    const engines = createAccountEngines({
      db: store.db,
      accounts: (['a', 'b'] as const).map((name) => ({ name, client: engineClientFrom(clients[name]) })),
      clock,
      logger: silentLogger(),
      instanceId: 'accounts-test',
      settleSeconds: 180,
      serverTimezone: 'UTC',
      webhooksEnabled: false,
      ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    });
    closers.push(() => engines.stop(3_600_000));
    await engines.start();
    const userOf = (name: Name): number => (name === 'a' ? 0 : 1);
    return {
      clock,
      sim,
      store,
      clients,
      assistants,
      campaigns,
      engines,
      calls: (name) =>
        [...sim.state.calls.values()]
          .filter((c) => c.userIndex === userOf(name))
          .sort((x, y) => x.id - y.id)
          .map((c) => ({ id: c.id, phone: c.client_phone_number, created: c.createdAt })),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function control(sim: RunningSimulator, pathname: string, body: unknown): Promise<void> {
  const res = await fetch(`${sim.url}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${pathname} answered ${res.status}`);
}

/** The limiter's counts per token from the simulator's own record. */
async function limiterByUser(sim: RunningSimulator): Promise<{ user_index: number; allowed: number; trips: number; refused: number }[]> {
  const res = await fetch(`${sim.url}/__sim/stats/users`);
  return ((await res.json()) as { rate_limit_by_user: { user_index: number; allowed: number; trips: number; refused: number }[] }).rate_limit_by_user;
}

describe('engine: many accounts in one daemon', () => {
  it("a revoked token stops only its account's campaigns, with the problem in status; the other account keeps its pace", async () => {
    rig = await startRig({ leads: 400, maxCalls: 4, durationSeconds: 20, scale: 60 });
    const r = rig;
    const MINUTE = 60_000;
    const start = r.clock.now();
    await waitUntil(() => r.clock.now() >= start + 2 * MINUTE, { message: 'two simulated minutes of dialing', timeoutMs: 30_000 });
    const revokedAt = r.clock.now();
    await control(r.sim, '/__sim/auth', { user_index: 1, valid: false });
    await waitUntil(() => r.engines.account('b')?.status().api === 'token-rejected', { message: "account b's token seen rejected", timeoutMs: 30_000 });
    await waitUntil(() => r.clock.now() >= revokedAt + 3 * MINUTE, { message: 'three more simulated minutes', timeoutMs: 40_000 });
    const end = r.clock.now();

    // The problem names the account; the other account's state is untouched.
    expect(r.engines.account('a')?.status().api).toBe('ok');
    expect(r.engines.status()).toMatchObject({ api: 'token-rejected' });
    expect(r.engines.status().apiDetail).toMatch(/^account b: /);
    expect(r.engines.accounts().map((a) => [a.name, a.api])).toEqual([
      ['a', 'ok'],
      ['b', 'token-rejected'],
    ]);

    // Judged from the simulator's record: b placed nothing once its token was refused (a
    // request already on its way may land), a kept dialing at the pace it had before.
    const settleMs = 15_000;
    expect(r.calls('b').filter((c) => c.created > revokedAt + settleMs)).toEqual([]);
    const perMinute = (from: number, to: number): number => (r.calls('a').filter((c) => c.created > from && c.created <= to).length * MINUTE) / (to - from);
    const before = perMinute(start + 30_000, revokedAt);
    const after = perMinute(revokedAt, end);
    expect(before).toBeGreaterThan(2);
    // The windows hold ~12 and ~20 of a's calls, paced in real milliseconds (clock ×60): the
    // ratio of two such counts moves by ±20 % between runs of one build on a busy machine (a
    // CI run saw 0.79). A stalled or halved account still fails this.
    expect(after).toBeGreaterThanOrEqual(before * 0.65);
  }, 120_000);

  it("each account has its own rate budget: both at their full limit, neither token's limiter tripped", async () => {
    // Far more demand than 100 requests a minute: 40 live calls of 10 s per account. At 10
    // times real speed both budgets together are 33 requests a real second, which a loaded
    // PostgreSQL keeps up with (at 20 times, 67 a second, it fell short: 154 of 160).
    // The gauges as the daemon sets them: live calls per campaign, and over the whole daemon.
    let mostInOneCampaign = 0;
    let mostInDaemon = 0;
    const metrics: EngineMetrics = {
      callPlaced: () => undefined,
      outcome: () => undefined,
      unknownAttempt: () => undefined,
      liveCalls: (_campaign, n) => (mostInOneCampaign = Math.max(mostInOneCampaign, n)),
      daemonLiveCalls: (n) => (mostInDaemon = Math.max(mostInDaemon, n)),
    };
    rig = await startRig({ leads: 1500, maxCalls: 40, durationSeconds: 10, scale: 10, metrics });
    const r = rig;
    const start = r.clock.now();
    const MINUTES = 2;
    await waitUntil(() => r.clock.now() >= start + MINUTES * 60_000, { message: 'two simulated minutes at the limit', timeoutMs: 60_000 });
    const stats = await limiterByUser(r.sim);
    for (const user of [0, 1]) {
      const mine = stats.find((s) => s.user_index === user)!;
      expect(mine.trips, `token ${user} tripped its limiter`).toBe(0);
      expect(mine.refused).toBe(0);
      // One shared budget would give each about half: each account used nearly all of its own.
      expect(mine.allowed, `token ${user} used ${mine.allowed} requests`).toBeGreaterThanOrEqual(0.8 * 100 * MINUTES);
    }
    expect(r.clients.a.budget.stats().rateLimited + r.clients.b.budget.stats().rateLimited).toBe(0);
    // campaignd_daemon_live_calls is both accounts' calls, not the last engine's own.
    expect(mostInDaemon).toBeGreaterThan(mostInOneCampaign);
  }, 120_000);

  it("a post-call webhook for account b's call is matched to b through the call", async () => {
    // Polling held off: the webhook, not the call list, settles the call.
    rig = await startRig({ leads: 1, maxCalls: 1, durationSeconds: 20, pollIntervalMs: 3_600_000 });
    const r = rig;
    await waitUntil(() => r.calls('b').length === 1 && typeof r.sim.state.calls.get(r.calls('b')[0]!.id)?.finishedAt === 'number', { message: "b's call ended", timeoutMs: 30_000 });
    await waitUntil(async () => (await r.store.db.selectFrom('attempts').select('id').where('campaign_id', '=', r.campaigns.b).where('state', '=', 'placed').execute()).length === 1, {
      message: "b's attempt placed",
    });
    const call = r.sim.state.calls.get(r.calls('b')[0]!.id)!;
    const payload = postCallPayload({ state: r.sim.state }, call, r.sim.state.assistants.get(call.assistantId)!);
    const statements = installStatementLog();
    statements.reset();
    const result = await r.engines.handleWebhook(payload, r.clock.now());
    expect(result).toMatchObject({ accepted: true, account: 'b' });
    // One lookup of the call finds its account and the attempt it applies to (a second
    // lookup per delivery was a measurable share of the daemon's CPU with 200 accounts).
    const lookups = statements.stats().filter((st) => /from "attempts" where "call_id" = /.test(st.sql));
    expect(lookups.reduce((n, st) => n + st.count, 0)).toBe(1);
    const attempt = await r.store.db.selectFrom('attempts').selectAll().where('campaign_id', '=', r.campaigns.b).executeTakeFirstOrThrow();
    expect(attempt.state).toBe('ended');
    expect(attempt.call_id).toBe(String(call.id));
  }, 60_000);
});

// Issue 25's chaos test (PostgreSQL only, in `npm run test:slow`: vitest.slow.config.ts): several
// active instances sharing eight accounts on one database (docs/several-instances.md). Two
// instances start, a third joins mid-run; a random instance is killed with SIGKILL five times
// (restarted at once, as a supervisor would) and one is frozen with SIGSTOP past the lease, then
// woken; the simulator loses 10 % of make_call answers after creating the call and limits every
// token as the live service does (20 per 10 s, 100 per minute). Judged from the simulator's own
// record: every lead final, every number called exactly once (max_retries 0), no token's limiter
// tripped, each failed instance's accounts dialed again within lease_seconds + 5 (from the failure,
// or from the first free slot when calls placed before it held them all), and once
// settled no instance holding more than ⌈accounts / instances⌉ + 1 accounts (account_leases).
//
// After the chaos the accounts finish their leads at their own pace, so the last wait is measured
// from the leads left: a fixed wait looked like calls stuck `ringing` in the simulator when they
// were only the calls in flight at the moment it ran out (issue 25).
import { afterEach, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/simulator/random.js';
import { accountHoldings } from '../../src/store/account-leases.js';
import { ACTIVE_LEAD_STATES } from '../../src/store/types.js';
import { stopAllProcesses, type Proc } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { startWebhookProxy, type WebhookProxy } from '../helpers/webhook-proxy.js';
import { sharingWorkspace } from './sharing-fixture.js';
import { assertNoSecrets, campaignState, numbers, readWorkspace, SECRETS, startDaemon, startSimulator, type SimProcess, type Workspace } from './daemon-fixture.js';

let ws: Workspace | null = null;
let drop: (() => Promise<void>) | null = null;
let proxy: WebhookProxy | null = null;
const frozen: Proc[] = [];
afterEach(async () => {
  for (const p of frozen) if (p.running()) p.child.kill('SIGCONT');
  await stopAllProcesses();
  await proxy?.close();
  proxy = null;
  ws?.cleanup();
  ws = null;
  await drop?.();
  drop = null;
});

const SEED = 25;
const LEASE_SECONDS = 3;
const TAKEOVER_BOUND_MS = (LEASE_SECONDS + 5) * 1000;
const INSTANCES = 3;
const KILLS = 5;
const ACCOUNTS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'wonka', 'stark', 'tyrell'];
const TOKENS = ACCOUNTS.map((name) => (name === 'acme' ? SECRETS.token : `tok-E2E-${name}-chaos-DO-NOT-LOG`));
/** Leads per account: enough that every account still has leads to dial through the whole chaos phase. */
const LEADS = 40;
const MAX_PARALLEL = 3;
/** Talk time of every call (all answered by a person), simulated seconds = real ones (time scale 1). */
const TALK_SECONDS = { min: 4, max: 8 };
/**
 * The longest one call holds a slot: 1 s dialing and at most 8 s ringing (the simulator's plan),
 * the talk, and 2 s for its webhook to free the slot and the next make_call to leave.
 */
const LONGEST_CALL_MS = (1 + 8 + TALK_SECONDS.max + 2) * 1000;
const SPREAD_BOUND = Math.ceil(ACCOUNTS.length / INSTANCES) + 1;
/** A call the killed process had already sent may be created by the simulator just after the kill: not a takeover. */
const IN_FLIGHT_GRACE_MS = 200;

/** The first outbound assistant a token sees (each token has its own). */
async function assistantOf(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/api/user/assistants/outbound`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  const body = (await res.json()) as { data?: { id: number }[] } | { id: number }[];
  const list = Array.isArray(body) ? body : (body.data ?? []);
  return Number(list[0]!.id);
}

interface SimCallWithOwner {
  client_phone_number: string;
  status: string;
  created_at_ms: number;
  finished_at_ms: number | null;
  assistant_id: number;
}

interface Failure {
  cause: 'SIGKILL' | 'SIGSTOP';
  instance: string;
  at: number;
  /**
   * Account → ms it went undialed: from the failure, or from the end of the first of its calls
   * when all its slots were held by calls placed before the failure (they go on at the service
   * whoever dials), to its first call placed by someone else.
   */
  redialMs: Map<string, number>;
  /** Account → its calls around the failure, ms from it (placed→ended), for the failure message. */
  seen: Map<string, string>;
}

describe('three active instances sharing eight accounts on PostgreSQL, under chaos', () => {
  it('survives 5 kills, a freeze past the lease and a join: no double dial, no limiter tripped, takeovers within lease + 5 s, spread within bound', async () => {
    const t0 = Date.now();
    const rand = mulberry32(SEED);
    const database = await createTestDatabase();
    drop = database.drop;
    const sim: SimProcess = await startSimulator({
      token: TOKENS[0]!,
      seed: SEED,
      // Every call succeeds: with max_retries 0 no number may be called twice whatever happens.
      // Every share named: one left out keeps its default (voicemails talk for minutes).
      outcomes: 'human=1,voicemail=0,no-answer=0,busy=0,failed=0',
      callDuration: `${TALK_SECONDS.min}-${TALK_SECONDS.max}`,
      // Time scale 1: the limiter counts on the simulator's clock, so a faster one would loosen it.
      extra: ['--rate-limit', '100/min', ...TOKENS.slice(1).flatMap((t) => ['--token', t])],
    });
    await sim.control('faults', { path: '/api/user/make_call', drop_after_create: 0.1 });
    const assistants = await Promise.all(TOKENS.map((t) => assistantOf(sim.url, t)));
    expect(new Set(assistants).size).toBe(ACCOUNTS.length);
    const accountOfAssistant = new Map(assistants.map((id, i) => [id, ACCOUNTS[i]!]));

    const shared = await sharingWorkspace({
      simUrl: sim.url,
      databaseUrl: database.url,
      accounts: ACCOUNTS,
      tokens: TOKENS,
      assistants,
      leadsPerAccount: LEADS,
      maxParallel: MAX_PARALLEL,
      leaseSeconds: LEASE_SECONDS,
      accountExtra: ['    rate_limit: { requests_per_minute: 100, burst: 20 }'],
      instances: INSTANCES,
    });
    ws = shared.ws;
    const { workspace, env, password, ports, configs } = shared;
    proxy = await startWebhookProxy(ports);
    /** Every account's assistant posts its webhooks to the proxy (an instance may point them at itself when it starts). */
    const pointWebhooksAtProxy = async (): Promise<void> => {
      for (const [i, token] of TOKENS.entries()) {
        await sim.setWebhook(`${proxy!.url}/webhooks/post-call?secret=${SECRETS.webhook}`, { assistant: assistants[i]!, token });
      }
    };

    const daemons: Proc[] = [];
    const slots: (Proc | null)[] = Array.from({ length: INSTANCES }, () => null);
    let started = 0;
    const start = async (slot: number): Promise<Proc> => {
      const d = await startDaemon({ ...workspace, configPath: configs[slot]!, httpPort: ports[slot]!, httpUrl: `http://127.0.0.1:${ports[slot]}` }, env, `instance-${slot}-${started++}`);
      daemons.push(d);
      slots[slot] = d;
      await pointWebhooksAtProxy();
      return d;
    };

    /** Who holds each account now (account_leases, judged by the database's clock): account → pid, null when unheld. */
    const holdings = async (): Promise<Map<string, number | null>> =>
      new Map((await readWorkspace(workspace, (db) => accountHoldings(db))).map((h) => [h.account, h.instance === null ? null : h.pid]));
    const callsOf = async (): Promise<Map<string, SimCallWithOwner[]>> => {
      const byAccount = new Map<string, SimCallWithOwner[]>(ACCOUNTS.map((a) => [a, []]));
      for (const c of (await sim.calls()) as unknown as SimCallWithOwner[]) byAccount.get(accountOfAssistant.get(c.assistant_id) ?? '?')?.push(c);
      return byAccount;
    };
    const live = (): Proc[] => slots.filter((p): p is Proc => p !== null && p.running() && !frozen.includes(p));
    /** Accounts per live instance pid, once every account is held by a live instance and nothing moved for a lease period. */
    const settledSpread = async (what: string): Promise<number[]> => {
      let last = '';
      let since = Date.now();
      let counts: number[] = [];
      await waitUntil(
        async () => {
          const held = await holdings();
          const pids = new Set(live().map((p) => p.pid));
          const key = JSON.stringify([...held.entries()].sort());
          if (key !== last) [last, since] = [key, Date.now()];
          counts = [...pids].map((pid) => [...held.values()].filter((h) => h === pid).length);
          return [...held.values()].every((h) => h !== null && pids.has(h)) && held.size === ACCOUNTS.length && Date.now() - since >= LEASE_SECONDS * 1000;
        },
        { timeoutMs: 30_000, intervalMs: 200, message: () => `accounts settled over the live instances ${what}: ${last}` },
      );
      return counts;
    };

    const failures: Failure[] = [];
    /** For each account `victim` held at the failure with leads left to dial: its first call after `at`, by another instance. */
    const measureRedials = async (failure: Failure, accounts: string[]): Promise<void> => {
      const before = await callsOf();
      const due = accounts.filter((a) => before.get(a)!.length < LEADS);
      await waitUntil(
        async () => {
          const calls = await callsOf();
          for (const a of due) {
            if (failure.redialMs.has(a)) continue;
            const after = calls.get(a)!.filter((c) => c.created_at_ms > failure.at + IN_FLIGHT_GRACE_MS);
            if (after.length === 0) continue;
            const first = Math.min(...after.map((c) => c.created_at_ms));
            const holding = calls.get(a)!.filter((c) => c.created_at_ms <= failure.at + IN_FLIGHT_GRACE_MS && (c.finished_at_ms === null || c.finished_at_ms > failure.at));
            const ends = holding.flatMap((c) => (c.finished_at_ms !== null && c.finished_at_ms <= first ? [c.finished_at_ms] : []));
            // No slot freed before the new call (more calls than slots): counted from the failure.
            const freeAt = holding.length < MAX_PARALLEL || ends.length === 0 ? failure.at : Math.min(...ends);
            failure.redialMs.set(a, first - freeAt);
            const rel = (t: number | null): string => (t === null ? 'live' : String(t - failure.at));
            failure.seen.set(a, `held ${holding.map((c) => `${rel(c.created_at_ms)}→${rel(c.finished_at_ms)}`).join(' ')}, slot free at ${freeAt - failure.at}, next call at ${first - failure.at}`);
          }
          return due.every((a) => failure.redialMs.has(a));
        },
        { timeoutMs: TAKEOVER_BOUND_MS + 20_000, intervalMs: 100, message: () => `accounts ${due.join(', ')} dialed again after the ${failure.cause} of ${failure.instance}: ${JSON.stringify([...failure.redialMs])}` },
      );
    };
    const accountsOf = (held: Map<string, number | null>, pid: number): string[] => ACCOUNTS.filter((a) => held.get(a) === pid);
    /** Waits for `proc` to have dialed a little (1–3 more calls of its accounts) plus up to 300 ms: a random moment of its work. */
    const randomMoment = async (proc: Proc): Promise<void> => {
      const mine = accountsOf(await holdings(), proc.pid);
      const count = async (): Promise<number> => {
        const calls = await callsOf();
        return mine.reduce((n, a) => n + calls.get(a)!.length, 0);
      };
      const target = (await count()) + 1 + Math.floor(rand() * 3);
      await waitUntil(async () => (await count()) >= target, { timeoutMs: 30_000, intervalMs: 50, message: `${target} calls of ${proc.name}'s accounts ${mine.join(', ')}` });
      await new Promise<void>((resolve) => setTimeout(resolve, Math.floor(rand() * 300)));
    };

    // Two instances, then a third joins mid-run.
    await Promise.all([start(0), start(1)]);
    const spreads: number[][] = [await settledSpread('over the first two instances')];
    await randomMoment(slots[0]!);
    const joiner = await start(2);
    const joinedAt = Date.now();
    await waitUntil(async () => accountsOf(await holdings(), joiner.pid).length > 0, { timeoutMs: 20_000, intervalMs: 100, message: 'the joining instance holding an account' });
    const joinMs = Date.now() - joinedAt;
    spreads.push(await settledSpread('after the join'));

    for (let k = 0; k < KILLS; k++) {
      const slot = Math.floor(rand() * INSTANCES);
      const victim = slots[slot]!;
      await randomMoment(victim);
      const held = await holdings();
      const failure: Failure = { cause: 'SIGKILL', instance: victim.name, at: Date.now(), redialMs: new Map(), seen: new Map() };
      victim.child.kill('SIGKILL');
      await victim.exited;
      // Restarted at once, as a supervisor would, while the others take its accounts over.
      const restarted = start(slot);
      await measureRedials(failure, accountsOf(held, victim.pid));
      failures.push(failure);
      await restarted;
      spreads.push(await settledSpread(`after the restart of ${victim.name}`));
    }

    // Frozen past the lease: the others dial its accounts; woken, it dials none of them until it takes some again under a new fence.
    const stopped = slots[Math.floor(rand() * INSTANCES)]!;
    await randomMoment(stopped);
    const heldAtStop = await holdings();
    const freeze: Failure = { cause: 'SIGSTOP', instance: stopped.name, at: Date.now(), redialMs: new Map(), seen: new Map() };
    frozen.push(stopped);
    stopped.child.kill('SIGSTOP');
    await measureRedials(freeze, accountsOf(heldAtStop, stopped.pid));
    failures.push(freeze);
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, freeze.at + LEASE_SECONDS * 2000 - Date.now())));
    stopped.child.kill('SIGCONT');
    frozen.splice(frozen.indexOf(stopped), 1);
    spreads.push(await settledSpread('after the frozen instance woke'));

    // The rest of the leads at the accounts' own pace (MAX_PARALLEL calls at a time, each at most
    // LONGEST_CALL_MS), plus one takeover should a lease have moved at the very end.
    const drainStart = Date.now();
    const callsAtEnd = await callsOf();
    const mostLeft = Math.max(...ACCOUNTS.map((a) => LEADS - callsAtEnd.get(a)!.length));
    const drainBound = Math.ceil(mostLeft / MAX_PARALLEL) * LONGEST_CALL_MS + TAKEOVER_BOUND_MS + 10_000;
    for (const name of ACCOUNTS) {
      await waitUntil(async () => (await campaignState(workspace, `c-${name}`)) === 'completed', {
        timeoutMs: Math.max(1_000, drainStart + drainBound - Date.now()),
        intervalMs: 500,
        message: async () =>
          `campaign c-${name} completed within ${(drainBound / 1000).toFixed(0)} s of the chaos (${mostLeft} leads left then at most); at ${new Date().toISOString()} ${(await callsOf()).get(name)!.length} calls of ${LEADS}; holders ${JSON.stringify([...(await holdings())])}; ${JSON.stringify(
            await readWorkspace(workspace, async (db) => {
              const c = await db.selectFrom('campaigns').selectAll().where('name', '=', `c-${name}`).executeTakeFirstOrThrow();
              const leads = await db.selectFrom('leads').select(['id', 'state']).where('campaign_id', '=', c.id).where('state', 'in', [...ACTIVE_LEAD_STATES]).execute();
              const attempts = await db.selectFrom('attempts').selectAll().where('campaign_id', '=', c.id).where('state', 'not in', ['ended']).execute();
              return { state: c.state, leads, attempts };
            }),
          )}; the simulator's last calls of the account ${JSON.stringify(((await sim.calls()) as unknown as (SimCallWithOwner & { timeline: unknown })[]).filter((c) => accountOfAssistant.get(c.assistant_id) === name).slice(-3))}; its last webhooks ${JSON.stringify(
            (await sim.webhooks()).filter((d) => d.userIndex === ACCOUNTS.indexOf(name)).slice(-3),
          )}; proxy ${JSON.stringify(proxy!.stats())}\n${daemons.map((d) => `${d.name}: ${d.stdout().split('\n').filter((l) => l.includes(`"${name}"`) || l.includes(`c-${name}`)).slice(-12).join('\n')}`).join('\n')}`,
      });
    }
    const drainMs = Date.now() - drainStart;
    const finalSpread = await settledSpread('at the end');
    spreads.push(finalSpread);
    for (const p of live()) {
      const exit = await p.stop();
      expect(exit, `${p.name} after SIGTERM:\n${p.stderr().slice(-2000)}`).toEqual({ code: 0, signal: null });
    }

    // The simulator's own record.
    const calls = (await sim.calls()) as unknown as SimCallWithOwner[];
    const perNumber = new Map<string, number>();
    for (const c of calls) perNumber.set(c.client_phone_number, (perNumber.get(c.client_phone_number) ?? 0) + 1);
    expect([...perNumber.entries()].filter(([, n]) => n > 1), 'numbers called more than once').toEqual([]);
    expect(calls).toHaveLength(ACCOUNTS.length * LEADS);
    for (const [i, name] of ACCOUNTS.entries()) {
      const own = new Set(numbers(LEADS, i * 100));
      expect(calls.filter((c) => own.has(c.client_phone_number)).every((c) => accountOfAssistant.get(c.assistant_id) === name), `${name}'s leads called with its own assistant`).toBe(true);
    }
    const limiter = ((await (await fetch(`${sim.url}/__sim/stats/users`)).json()) as { rate_limit_by_user: { user_index: number; allowed: number; trips: number; refused: number }[] }).rate_limit_by_user;
    expect(limiter).toHaveLength(ACCOUNTS.length);
    expect(limiter.filter((u) => u.trips > 0 || u.refused > 0), 'tokens whose limiter refused a request').toEqual([]);
    // Every lead final, in the daemons' database.
    const active = await readWorkspace(workspace, (db) => db.selectFrom('leads').select(['id', 'state']).where('state', 'in', [...ACTIVE_LEAD_STATES]).execute());
    expect(active).toEqual([]);

    expect(failures).toHaveLength(KILLS + 1);
    for (const f of failures) {
      expect(f.redialMs.size, `${f.cause} of ${f.instance}: accounts with leads left`).toBeGreaterThan(0);
      for (const [account, ms] of f.redialMs) expect(ms, `${f.cause} of ${f.instance}: account ${account} undialed (ms from the failure: ${f.seen.get(account)})`).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    }
    for (const s of spreads) expect(Math.max(...s), `accounts per instance ${JSON.stringify(s)}`).toBeLessThanOrEqual(SPREAD_BOUND);
    assertNoSecrets(daemons.flatMap((d) => [d.stdout(), d.stderr()]), 'the daemons output');
    if (daemons.some((d) => d.stdout().includes(password) || d.stderr().includes(password))) throw new Error('the database password reached a daemon log');

    const worst = (f: Failure): number => Math.max(...f.redialMs.values());
    console.log(
      `accounts chaos: takeovers (failure or first free slot → every account of it dialed again, worst per failure) ${failures.map((f) => `${f.cause} ${(worst(f) / 1000).toFixed(2)} s/${f.redialMs.size} acc`).join(', ')}; ` +
        `goal ≤ ${LEASE_SECONDS + 5} s; join → first account ${(joinMs / 1000).toFixed(2)} s; spreads ${spreads.map((s) => s.join('/')).join(' ')} (bound ${SPREAD_BOUND}); ` +
        `${calls.length} calls, limiter allowed ${limiter.map((u) => u.allowed).join('/')} trips 0; webhooks per port ${JSON.stringify(proxy!.stats().forwarded)}; ` +
        `the rest of the leads (${mostLeft} at most) ${(drainMs / 1000).toFixed(0)} s (bound ${(drainBound / 1000).toFixed(0)} s); claims refused by fencing ${daemons.reduce((n, d) => n + d.count(/claim refused/), 0)}; ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
  }, 300_000);
});

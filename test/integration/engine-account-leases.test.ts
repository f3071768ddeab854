// The per-account engines under per-account leases (several active instances;
// docs/several-instances.md), through the real simulator and one store: an account's engine
// dials only once its account is taken, its claims carry that account's fence, and (on
// PostgreSQL, where the database judges the fence) a claim under a fence another instance
// has replaced is refused and drops the account at once, with nothing dialed.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccountEngines, type AccountEngines } from '../../src/engine/accounts.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { createHeldAccounts, type AccountChange } from '../../src/ha/held-accounts.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { acquireAccountLease, releaseAccountLease } from '../../src/store/account-leases.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { scaledClock, systemClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { DEFAULT_ORIGIN, phoneNumbers } from '../helpers/stack.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { postCallPayload } from '../../src/simulator/webhook-sender.js';

const TOKEN = 'account-leases-token-0123456789';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
});

async function* leadRows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const phone of phones) yield { ok: true, line: ++line, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

describe('engine: an account dialed under its own lease', () => {
  it('dials only once the account is taken, under its fence; a replaced fence is refused and drops the account', async () => {
    const clock = systemClock;
    const sim: RunningSimulator = await startSimulator({ clock, networkClock: systemClock, tokens: [TOKEN], seed: 3, callIdInResponse: true, outcomes: { human: 1 }, callDurationSeconds: { min: 60, max: 60 } });
    closers.push(() => sim.close());
    const requests: string[] = [];
    const client = createServiceClient({
      baseUrl: sim.url,
      getToken: () => TOKEN,
      clock,
      logger: silentLogger(),
      serverTimezone: 'UTC',
      requestTimeoutMs: 10_000,
      rateLimit: { requestsPerMinute: 600, burst: 30, burstWindowSeconds: 10 },
      onRequest: (e) => requests.push(e.endpoint),
    });
    closers.push(() => client.close());
    const store: DatabaseHandle = await openTestStore();
    closers.push(() => store.close());
    const db = store.db;
    await migrateToLatest(db, { clock });
    const assistant = Number((await client.listOutboundAssistants())[0]?.id);
    const campaign = await upsertCampaign(db, testCampaignConfig('acme-calls', { assistantId: assistant, maxCallsInParallel: 10, maxRetries: 0 }), { timezone: 'UTC' }, clock.now());
    const addLeads = (count: number, from: number): Promise<unknown> =>
      importLeads(db, { id: campaign.id, allowDuplicates: false }, leadRows(phoneNumbers(count, from)), { now: clock.now(), sourceFile: `/test/acme-${from}.csv` });
    await addLeads(3, 0);

    const held = createHeldAccounts(clock);
    const changes: AccountChange[] = [];
    held.onChange((c) => changes.push(c));
    const engines: AccountEngines = createAccountEngines({
      db,
      accounts: [{ name: 'acme', client: engineClientFrom(client) }],
      held,
      lostGraceMs: 1_000,
      clock,
      logger: silentLogger(),
      instanceId: 'me',
      settleSeconds: 180,
      serverTimezone: 'UTC',
      webhooksEnabled: false,
    });
    closers.push(() => engines.stop(1_000));
    requests.length = 0;
    await engines.start();
    await engines.tokenChanged();
    // Not held: the engine stands by (its dial loop does not even run) and spends nothing on
    // the token, which another instance may be dialing at its full rate.
    expect(engines.account('acme')!.isActive()).toBe(false);
    expect(sim.state.calls.size).toBe(0);
    expect(requests).toEqual([]);

    // Taken (by the database's clock, so the PostgreSQL trigger lets the claims in): dialed under its fence.
    const fence = (await acquireAccountLease(db, { account: 'acme', holder: 'me', leaseMs: 600_000 }))!;
    held.take('acme', fence, clock.now() + 600_000);
    await waitUntil(async () => sim.state.calls.size === 3, { timeoutMs: 15_000, message: 'the three leads called' });
    expect(engines.account('acme')!.isActive()).toBe(true);
    // Taken: the assistants are listed (their maximum durations) before the first call.
    await waitUntil(() => requests.filter((r) => r === 'make_call').length === 3, { timeoutMs: 5_000, message: 'the three make_call answers' });
    expect(requests.indexOf('list_assistants'), requests.join()).toBeGreaterThanOrEqual(0);
    expect(requests.indexOf('list_assistants'), requests.join()).toBeLessThan(requests.indexOf('make_call'));
    const attempts = await db.selectFrom('attempts').select(['fence_account', 'fence_token']).execute();
    expect(attempts).toEqual(Array.from({ length: 3 }, () => ({ fence_account: 'acme', fence_token: fence })));

    if (testDialect !== 'postgres') return; // the fence is judged by PostgreSQL's trigger only
    // Another instance takes the account over (this one, frozen, still believes it holds fence).
    await releaseAccountLease(db, { account: 'acme', holder: 'me', fence });
    expect(await acquireAccountLease(db, { account: 'acme', holder: 'other', leaseMs: 600_000 })).toBe(fence + 1);
    await addLeads(2, 100);
    engines.wake();
    await waitUntil(async () => changes.some((c) => c.kind === 'lost'), { timeoutMs: 15_000, message: 'the account dropped after the refused claim' });
    expect(held.holds('acme')).toBe(false);
    await waitUntil(async () => !engines.account('acme')!.isActive(), { timeoutMs: 5_000, message: 'its engine standing by' });
    expect(sim.state.calls.size).toBe(3);
    expect(Number((await db.selectFrom('attempts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)).toBe(3);
  }, 60_000);

  it('with several active instances the deliveries for accounts held here are applied here, not queued', async () => {
    // A delivery is queued only for another instance holding its account
    // (postgres-webhook-inbox.test.ts); the accounts this instance holds are its own to write.
    const clock = scaledClock(20, DEFAULT_ORIGIN);
    const tokens = { a: 'account-leases-token-a-0123456789', b: 'account-leases-token-b-0123456789' };
    const sim: RunningSimulator = await startSimulator({ clock, networkClock: systemClock, tokens: [tokens.a, tokens.b], seed: 4, callIdInResponse: true, outcomes: { human: 1 }, callDurationSeconds: { min: 1, max: 1 } });
    closers.push(() => sim.close());
    const store: DatabaseHandle = await openTestStore();
    closers.push(() => store.close());
    const db = store.db;
    await migrateToLatest(db, { clock });
    const held = createHeldAccounts(clock);
    const accounts = [];
    for (const [i, name] of (['a', 'b'] as const).entries()) {
      const client = createServiceClient({ baseUrl: sim.url, getToken: () => tokens[name], clock, logger: silentLogger(), serverTimezone: 'UTC', requestTimeoutMs: 10_000 });
      closers.push(() => client.close());
      const assistant = Number((await client.listOutboundAssistants())[0]?.id);
      const campaign = await upsertCampaign(db, testCampaignConfig(`calls-${name}`, { assistantId: assistant, account: name, maxCallsInParallel: 1, maxRetries: 0 }), { timezone: 'UTC' }, clock.now());
      await importLeads(db, { id: campaign.id, allowDuplicates: false }, leadRows(phoneNumbers(1, i * 100)), { now: clock.now(), sourceFile: `/test/${name}.csv` });
      accounts.push({ name, client: engineClientFrom(client) });
    }
    const engines = createAccountEngines({
      db,
      accounts,
      held,
      lostGraceMs: 1_000,
      clock,
      logger: silentLogger(),
      instanceId: 'me',
      settleSeconds: 180,
      serverTimezone: 'UTC',
      webhooksEnabled: false,
      pollIntervalMs: 3_600_000,
    });
    closers.push(() => engines.stop(1_000));
    await engines.start();
    for (const name of ['a', 'b']) held.take(name, (await acquireAccountLease(db, { account: name, holder: 'me', leaseMs: 600_000 }))!, clock.now() + 600_000);
    const placed = async (): Promise<number> => (await db.selectFrom('attempts').select('id').where('state', '=', 'placed').where('call_id', 'is not', null).execute()).length;
    await waitUntil(async () => (await placed()) === 2 && [...sim.state.calls.values()].every((c) => typeof c.finishedAt === 'number'), { timeoutMs: 15_000, message: 'both calls placed and ended' });

    const payloads = [...sim.state.calls.values()].map((call) => postCallPayload({ state: sim.state }, call, sim.state.assistants.get(call.assistantId)!));
    // Both in one turn of the event loop, as two deliveries reaching the instance at once.
    const results = await Promise.all(payloads.map((p) => engines.handleWebhook(p, clock.now())));
    expect(results.map((r) => [r.accepted, r.account]).sort()).toEqual([
      [true, 'a'],
      [true, 'b'],
    ]);
    expect(await placed()).toBe(0);
    expect(await db.selectFrom('webhook_inbox').select('id').execute()).toEqual([]);
  }, 60_000);
});

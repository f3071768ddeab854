// Several active instances (docs/several-instances.md): a post-call webhook reaches any
// instance, but only the instance holding the call's account writes its campaigns. Two
// instances on one PostgreSQL database, each with its own connection and its own engines:
// B holds the account and dials; the delivery reaches A, which queues it; B, looking every
// 200 ms, applies it once, and the queue is empty again. With no holder, A applies it itself.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccountEngines, type AccountEngines, type AccountLane } from '../../src/engine/accounts.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { createHeldAccounts, type HeldAccountsBook } from '../../src/ha/held-accounts.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient } from '../../src/service/client.js';
import { startSimulator } from '../../src/simulator/server.js';
import { postCallPayload } from '../../src/simulator/webhook-sender.js';
import { acquireAccountLease, releaseAccountLease } from '../../src/store/account-leases.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { scaledClock, systemClock } from '../../src/time/clock.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { DEFAULT_ORIGIN, phoneNumbers } from '../helpers/stack.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';

const TOKENS = { acme: 'inbox-token-acme-0123456789', globex: 'inbox-token-globex-0123456789' } as const;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
});

async function* leadRows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const phone of phones) yield { ok: true, line: ++line, lead: { phoneNumber: phone, secondary: [], variables: {} } };
}

describe('several active instances: a delivery reaching the instance that does not hold its account', () => {
  it('is queued for the holder, which applies it once; with no holder it is applied where it arrived', async () => {
    const clock = scaledClock(20, DEFAULT_ORIGIN);
    const sim = await startSimulator({ clock, networkClock: systemClock, tokens: [TOKENS.acme, TOKENS.globex], seed: 6, callIdInResponse: true, outcomes: { human: 1 }, callDurationSeconds: { min: 1, max: 1 } });
    closers.push(() => sim.close());
    const database = await createTestDatabase();
    closers.push(() => database.drop());
        // One connection per instance for its engines, and one for looking deliveries up and queueing them, as each daemon has.
    const stores = { A: openPostgres(database.url), B: openPostgres(database.url), routeA: openPostgres(database.url), routeB: openPostgres(database.url) };
    closers.push(...Object.values(stores).map((s) => () => s.close()));
    await migrateToLatest(stores.A.db, { clock });
    const lanes: AccountLane[] = [];
    for (const [i, name] of (['acme', 'globex'] as const).entries()) {
      const client = createServiceClient({ baseUrl: sim.url, getToken: () => TOKENS[name], clock, logger: silentLogger(), serverTimezone: 'UTC', requestTimeoutMs: 10_000 });
      closers.push(() => client.close());
      const assistant = Number((await client.listOutboundAssistants())[0]?.id);
      const campaign = await upsertCampaign(stores.A.db, testCampaignConfig(`calls-${name}`, { assistantId: assistant, account: name, maxCallsInParallel: 1, maxRetries: 0 }), { timezone: 'UTC' }, clock.now());
      if (name === 'acme') await importLeads(stores.A.db, { id: campaign.id, allowDuplicates: false }, leadRows(phoneNumbers(1, i * 100)), { now: clock.now(), sourceFile: '/test/acme.csv' });
      lanes.push({ name, client: engineClientFrom(client) });
    }
    const instance = async (id: 'A' | 'B'): Promise<{ engines: AccountEngines; held: HeldAccountsBook }> => {
      const held = createHeldAccounts(clock);
      const engines = createAccountEngines({
        db: stores[id].db,
        routeDb: stores[id === 'A' ? 'routeA' : 'routeB'].db,
        accounts: lanes,
        held,
        lostGraceMs: 1_000,
        clock,
        logger: silentLogger(),
        instanceId: id,
        settleSeconds: 180,
        serverTimezone: 'UTC',
        webhooksEnabled: false,
        // The call list held off: only the delivery can end the call.
        pollIntervalMs: 3_600_000,
      });
      closers.push(() => engines.stop(1_000));
      await engines.start();
      return { engines, held };
    };
    const A = await instance('A');
    const B = await instance('B');

    const fence = (await acquireAccountLease(stores.B.db, { account: 'acme', holder: 'B', leaseMs: 600_000 }))!;
    B.held.take('acme', fence, clock.now() + 600_000);
    const db = stores.A.db;
    const attempt = () => db.selectFrom('attempts').select(['state', 'outcome', 'call_id']).executeTakeFirst();
    await waitUntil(async () => (await attempt())?.state === 'placed' && [...sim.state.calls.values()].every((c) => typeof c.finishedAt === 'number'), { timeoutMs: 15_000, message: "acme's call placed by B and ended" });
    const call = [...sim.state.calls.values()][0]!;
    const payload = postCallPayload({ state: sim.state }, call, sim.state.assistants.get(call.assistantId)!);
    const queued = () => db.selectFrom('webhook_inbox').select('id').execute();

    // A does not hold acme: it writes nothing of acme's campaign, only the queue.
    expect(await A.engines.handleWebhook(payload, clock.now())).toMatchObject({ accepted: true, account: 'acme', detail: 'queued for the instance holding the account' });
    // B applies it and empties the queue in the same transaction.
    await waitUntil(async () => (await attempt())?.state === 'ended' && (await queued()).length === 0, { timeoutMs: 10_000, message: 'the queued delivery applied by B' });
    expect(await attempt()).toMatchObject({ state: 'ended', outcome: 'success', call_id: String(call.id) });
    expect((await db.selectFrom('call_results').select('call_id').execute()).map((r) => r.call_id)).toEqual([String(call.id)]);

    // The same delivery again: queued, applied as the duplicate it is, gone from the queue.
    expect(await A.engines.handleWebhook(payload, clock.now())).toMatchObject({ detail: 'queued for the instance holding the account' });
    await waitUntil(async () => (await queued()).length === 0, { timeoutMs: 10_000, message: 'the repeated delivery drained' });
    expect((await db.selectFrom('call_results').select('call_id').execute()).length).toBe(1);

    // Nobody holds acme: A applies a delivery itself rather than queue it for no one.
    await releaseAccountLease(stores.B.db, { account: 'acme', holder: 'B', fence });
    B.held.drop('acme', 'released');
    expect(await A.engines.handleWebhook(payload, clock.now())).toMatchObject({ accepted: false, detail: 'duplicate', account: 'acme' });
    expect(await queued()).toEqual([]);
    // A delivery left queued for an account nobody has held for 30 s (taken out of every
    // instance's accounts:) is applied by whichever instance looks next.
    await db.insertInto('webhook_inbox').values({ account: 'acme', received_at: clock.now(), payload: JSON.stringify(payload) }).execute();
    await waitUntil(async () => (await queued()).length === 0, { timeoutMs: 10_000, message: 'the stranded delivery applied by an instance that does not hold acme' });
    expect((await db.selectFrom('call_results').select('call_id').execute()).length).toBe(1);
  }, 60_000);
});

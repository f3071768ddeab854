// Syncing the campaign files into the store, against the simulator over loopback: with several
// active instances ('when-needed') every instance syncs the same files at start and on SIGHUP,
// so the assistants are listed only when a campaign needs it (new, another assistant, no zone
// yet, or a problem to look at again); a lone daemon ('always') checks them every time.
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadedConfig } from '../../src/config/types.js';
import { syncCampaigns } from '../../src/lifecycle/sync-config.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient } from '../../src/service/client.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { getCampaignByName } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { systemClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';
import { campaignConfig } from './status-fixture.js';

const TOKEN = 'tok-sync-assistants';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of closers.splice(0).reverse()) await fn();
});

function config(campaigns: LoadedConfig['campaigns']): LoadedConfig {
  return { campaigns, problems: [], brokenCampaigns: [] } as unknown as LoadedConfig;
}

describe('syncCampaigns: listing the assistants', () => {
  it("lists them for a new campaign, another assistant or a problem, and otherwise not when 'when-needed'", async () => {
    const sim: RunningSimulator = await startSimulator({ clock: systemClock, tokens: [TOKEN] });
    closers.push(() => sim.close());
    const requests: string[] = [];
    const client = createServiceClient({ baseUrl: sim.url, getToken: () => TOKEN, clock: systemClock, logger: silentLogger(), onRequest: (e) => requests.push(e.endpoint) });
    closers.push(() => client.close());
    const store: DatabaseHandle = await openTestStore();
    closers.push(() => store.close());
    await migrateToLatest(store.db, { clock: systemClock });
    const sync = (campaigns: LoadedConfig['campaigns'], listAssistants: 'always' | 'when-needed'): Promise<unknown> =>
      syncCampaigns(store.db, config(campaigns), { now: systemClock.now(), logger: silentLogger(), client: engineClientFrom(client), listAssistants });
    const listed = (): number => requests.splice(0).filter((e) => e === 'list_assistants').length;

    // New: listed, even when 'when-needed'.
    await sync([campaignConfig('a', { assistantId: 1 })], 'when-needed');
    expect(listed()).toBe(1);
    // Known, same assistant, a zone, no problem: not listed again.
    await sync([campaignConfig('a', { assistantId: 1 })], 'when-needed');
    expect(listed()).toBe(0);
    // A lone daemon checks every time.
    await sync([campaignConfig('a', { assistantId: 1 })], 'always');
    expect(listed()).toBe(1);
    // Another assistant (one the account does not have): listed, and the problem is set.
    await sync([campaignConfig('a', { assistantId: 999 })], 'when-needed');
    expect(listed()).toBe(1);
    expect((await getCampaignByName(store.db, 'a'))?.problem).toMatch(/assistant 999 is not one of this account's assistants/);
    // A campaign with a problem is looked at again: fixed back, listed, and the problem cleared.
    await sync([campaignConfig('a', { assistantId: 1 })], 'when-needed');
    expect(listed()).toBe(1);
    expect((await getCampaignByName(store.db, 'a'))?.problem).toBeNull();
  });
});

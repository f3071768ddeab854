import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { followRemoteCampaigns } from '../../src/engine/remote-campaigns.js';
import { loadRuntimeCampaigns } from '../../src/engine/runtime-campaign.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient, type ServiceClient } from '../../src/service/client.js';
import { startSimulator } from '../../src/simulator/server.js';
import { getCampaignByName, upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function campaign(remoteCampaignId: number): CampaignConfig {
  return {
    name: 'linked',
    file: '/tmp/linked.yaml',
    assistantId: 1,
    timezone: 'UTC',
    allowedDays: [1, 2, 3, 4, 5, 6, 7],
    allowedHoursStart: 0,
    allowedHoursEnd: 0,
    maxCallsInParallel: 2,
    maxRetries: 1,
    retryIntervalSeconds: 60,
    markCompleteWhenNoLeads: true,
    retryOn: ['busy', 'no-answer', 'failed', 'voicemail'],
    blackoutDates: [],
    initialStatus: 'running',
    leads: { remoteCampaignId },
    allowDuplicates: false,
  };
}

describe('a campaign linked by remote_campaign_id follows the service campaign (rule 8)', () => {
  it('honours stop and start done on the service, and ignores a status that did not change', async () => {
    const clock = new ManualClock();
    const sim = await startSimulator({ clock, tokens: ['t'] });
    cleanups.push(() => sim.close());
    const service: ServiceClient = createServiceClient({ baseUrl: sim.url, getToken: () => 't', clock, logger: silentLogger() });
    cleanups.push(() => service.close());
    const store: DatabaseHandle = await openTestStore();
    cleanups.push(() => store.close());
    await migrateToLatest(store.db, { clock });

    const [remote] = await service.listCampaigns();
    expect(remote?.status).toBe('draft');
    const remoteId = Number(remote!.id);
    await upsertCampaign(store.db, campaign(remoteId), { timezone: 'UTC' }, clock.now());
    const client = engineClientFrom(service);
    const seen = new Map<number, string>();
    const follow = async () => followRemoteCampaigns(store.db, client, await loadRuntimeCampaigns(store.db), seen, clock.now(), silentLogger());

    expect(await follow()).toBe(false); // draft: no opinion
    await service.updateCampaignStatus({ campaign_id: remoteId, action: 'stop' });
    expect(await follow()).toBe(true);
    expect((await getCampaignByName(store.db, 'linked'))?.state).toBe('stopped');
    expect(await follow()).toBe(false); // unchanged remote status changes nothing

    await service.updateCampaignStatus({ campaign_id: remoteId, action: 'start' });
    expect(await follow()).toBe(true);
    expect((await getCampaignByName(store.db, 'linked'))?.state).toBe('running');
  });
});

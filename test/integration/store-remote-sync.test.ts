import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { syncRemoteLeads } from '../../src/leads/remote-sync.js';
import type { ServiceClient } from '../../src/service/client.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { syncSuppressions } from '../../src/store/suppressions.js';
import { clientFor, startTestSim } from './simulator-fixture.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

// Remote leads read through the real client from the simulator over HTTP.

let sim: RunningSimulator;
let client: ServiceClient;
let remoteIds: number[];
let handle: DatabaseHandle;
let campaignId: number;

beforeAll(async () => {
  sim = (await startTestSim({ tokens: ['remote-sync'] })).sim;
  client = clientFor(sim.url, 'remote-sync');
  remoteIds = (await client.listCampaigns()).map((c) => c.id);
});
afterAll(async () => {
  await client.close();
  await sim.close();
});
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  const cfg = testCampaignConfig('remote', { maxCallsInParallel: 2, leads: { remoteCampaignId: remoteIds[0]! } });
  campaignId = (await upsertCampaign(handle.db, cfg, { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => handle.close());

describe('syncRemoteLeads', () => {
  it('keeps the campaign’s leads with their secondary contacts, idempotently, and picks up new ones', async () => {
    const remote = remoteIds[0]!;
    const ada = await client.createLead({
      phone_number: '+4915112350001', campaign_id: remote, variables: { name: 'Ada', tier: 2 },
      secondary_contacts: [{ phone_number: '+4915112350901', variables: {} }],
    });
    await client.createLead({ phone_number: '+4915112350002', campaign_id: remote, variables: { name: 'Ben' } });
    if (remoteIds[1] !== undefined) await client.createLead({ phone_number: '+4915112350003', campaign_id: remoteIds[1] });
    await syncSuppressions(handle.db, ['+4915112350002'], 1);

    const first = await syncRemoteLeads(handle.db, client, { id: campaignId, remoteCampaignId: remote }, 100);
    expect(first).toMatchObject({ seen: 2, added: 2, unchanged: 0, invalid: 0 });
    const leads = await handle.db.selectFrom('leads').selectAll().orderBy('id').execute();
    expect(leads.map((l) => [l.dedupe_key, l.phone_number, l.state, l.remote_lead_id, l.next_due_at])).toEqual([
      [`remote:${ada.id}`, '+4915112350001', 'pending', ada.id, 100],
      [expect.stringMatching(/^remote:\d+$/), '+4915112350002', 'suppressed', expect.any(Number), null],
    ]);
    expect(JSON.parse(leads[0]!.variables_json)).toEqual({ name: 'Ada', tier: '2' });
    const contacts = await handle.db.selectFrom('lead_contacts').select(['position', 'phone_number', 'remote_lead_id']).where('lead_id', '=', leads[0]!.id).orderBy('position').execute();
    // The secondary numbers only: the primary is the lead's own phone_number.
    expect(contacts).toEqual([{ position: 1, phone_number: '+4915112350901', remote_lead_id: ada.secondary_contacts[0]!.id }]);

    const again = await syncRemoteLeads(handle.db, client, { id: campaignId, remoteCampaignId: remote }, 200);
    expect(again).toMatchObject({ seen: 2, added: 0, unchanged: 2 });

    await client.createLead({ phone_number: '+4915112350004', campaign_id: remote });
    const later = await syncRemoteLeads(handle.db, client, { id: campaignId, remoteCampaignId: remote }, 300);
    expect(later).toMatchObject({ seen: 3, added: 1, unchanged: 2 });
    expect(await handle.db.selectFrom('leads').select('id').execute()).toHaveLength(3);
  });
});

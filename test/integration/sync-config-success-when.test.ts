// The config sync judges a campaign's calls under its success_when (README, "Assistant
// variants") when the rule is new or changed, so that `status` reads the successes the
// database keeps instead of every call's variables; a sync with the same rule judges nothing.
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignConfig, LoadedConfig } from '../../src/config/types.js';
import { judgeSuccesses, syncCampaigns } from '../../src/lifecycle/sync-config.js';
import { engineClientFrom } from '../../src/engine/service-port.js';
import { silentLogger } from '../../src/log/logger.js';
import { createServiceClient } from '../../src/service/client.js';
import { startSimulator } from '../../src/simulator/server.js';
import { collectVariantsByCampaign } from '../../src/status/variants.js';
import { getCampaignByName } from '../../src/store/campaigns.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { keptSuccesses, successRuleKey } from '../../src/store/variant-successes.js';
import { systemClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';
import { campaignConfig } from './status-fixture.js';

const TOKEN = 'tok-sync-success';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of closers.splice(0).reverse()) await fn();
});

describe('syncCampaigns: success_when', () => {
  it('judges the calls when the rule is new or changed, and status then reads the kept successes', async () => {
    const sim = await startSimulator({ clock: systemClock, tokens: [TOKEN] });
    closers.push(() => sim.close());
    const client = createServiceClient({ baseUrl: sim.url, getToken: () => TOKEN, clock: systemClock, logger: silentLogger() });
    closers.push(() => client.close());
    const store = await openTestStore();
    closers.push(() => store.close());
    await migrateToLatest(store.db, { clock: systemClock });
    const logged: unknown[] = [];
    const logger = { ...silentLogger(), info: (fields: unknown) => logged.push(fields) } as ReturnType<typeof silentLogger>;
    const cfgWith = (values: string[]): CampaignConfig =>
      campaignConfig('a', { assistantId: 1, variants: [{ name: 'x', assistantId: 1, weight: 1 }, { name: 'y', assistantId: 1, weight: 1 }], successWhen: { variable: 'interest', values } });
    const sync = (cfg: CampaignConfig) => syncCampaigns(store.db, { campaigns: [cfg], problems: [], brokenCampaigns: [] } as unknown as LoadedConfig, { now: 0, logger, client: engineClientFrom(client) });

    // A campaign with calls already made (results written before 0035: not judged).
    await sync(campaignConfig('a', { assistantId: 1 }));
    const id = Number((await getCampaignByName(store.db, 'a'))!.id);
    const answers = ['Ja ', 'no', 'maybe', 'JA', 'ja', 'Maybe'];
    for (const [i, interest] of answers.entries()) {
      const lead = i + 1;
      await store.db.insertInto('leads').values({ id: lead, campaign_id: id, dedupe_key: `+4930${lead}`, phone_number: `+4930${lead}`, state: 'completed', state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, timezone: null, created_at: 0, updated_at: 0, variant: i % 2 === 0 ? 'x' : 'y' }).execute();
      await store.db.insertInto('attempts').values({ id: lead, campaign_id: id, lead_id: lead, contact_position: 0, phone_number: `+4930${lead}`, assistant_id: 1, state: 'ended', counted: 1, call_id: String(lead), call_status: 'completed', answered_by: 'human', outcome: 'success', detail: null, outcome_source: 'poll', created_at: 0, sent_at: 0, answered_at: null, ended_at: 1, settle_deadline: null, owner: null }).execute();
      await store.db.insertInto('call_results').values({ attempt_id: lead, campaign_id: id, lead_id: lead, call_id: String(lead), status: 'completed', answered_by: 'human', duration_seconds: null, started_at: null, ended_at: null, cost: null, recording_url: null, transcript_json: null, extracted_json: JSON.stringify({ interest }), evaluation_json: null, source: 'poll', received_at: 0, updated_at: 0, erased_at: null }).execute();
    }
    const kept = async (values: string[]) => (await keptSuccesses(store.db, [{ id, key: successRuleKey({ variable: 'interest', values }) }])).get(id);
    expect(await kept(['ja'])).toBeUndefined(); // not judged: status would read the calls

    // The rule appears in the file: the sync judges the six calls.
    await sync(cfgWith(['ja']));
    expect(logged).toContainEqual({ campaign: 'a', results: 6 });
    expect(await kept(['ja'])).toEqual(new Map([['x', 2], ['y', 1]]));
    // The same rule (written otherwise): nothing to judge.
    logged.length = 0;
    await sync(cfgWith([' JA']));
    expect(logged).toEqual([]);
    // Another rule: judged again; status shows it from the kept sums.
    await sync(cfgWith(['maybe', 'ja']));
    expect(logged).toContainEqual({ campaign: 'a', results: 6 });
    expect(await kept(['maybe', 'ja'])).toEqual(new Map([['x', 3], ['y', 2]]));
    const shown = (await collectVariantsByCampaign(store.db, [{ id, config: cfgWith(['maybe', 'ja']) }])).get(id)!;
    expect(shown.variants.map((v) => [v.name, v.successes])).toEqual([['x', 3], ['y', 2]]);

    // The daemon's sync ('later') judges nothing itself and returns the judging, which it
    // runs while the campaigns dial: status reads the calls until it is done, never wrong.
    logged.length = 0;
    const later = await syncCampaigns(store.db, { campaigns: [cfgWith(['no'])], problems: [], brokenCampaigns: [] } as unknown as LoadedConfig, { now: 0, logger, client: engineClientFrom(client), judge: 'later' });
    expect(later.map((j) => j.campaign)).toEqual(['a']);
    expect(logged).toEqual([]);
    expect(await kept(['no'])).toBeUndefined();
    const fallback = (await collectVariantsByCampaign(store.db, [{ id, config: cfgWith(['no']) }])).get(id)!;
    expect(fallback.variants.map((v) => [v.name, v.successes])).toEqual([['x', 0], ['y', 1]]);
    // Stopped before its first batch (the daemon stopping): nothing judged, nothing lost.
    await judgeSuccesses(store.db, later, logger, () => true);
    expect(await kept(['no'])).toBeUndefined();
    await judgeSuccesses(store.db, later, logger);
    expect(logged).toContainEqual({ campaign: 'a', results: 6 });
    expect(await kept(['no'])).toEqual(new Map([['x', 0], ['y', 1]]));
  });
});

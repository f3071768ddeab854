// The daemon's one campaign catalog, seen by each account's engine through its own view
// (src/engine/campaign-catalog.ts, campaign-view.ts): each view dials only its own campaigns,
// the campaigns are read once for all engines, a forced read sees a write made before it
// even while another read is under way, and every engine's control loop learns of a change
// whichever engine's read saw it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCampaignCatalog, type CampaignCatalog } from '../../src/engine/campaign-catalog.js';
import { createCampaignView } from '../../src/engine/campaign-view.js';
import { createControlLoop } from '../../src/engine/loops/control-loop.js';
import { silentLogger } from '../../src/log/logger.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { ManualClock } from '../../src/time/clock.js';
import { openTestStore } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { campaignConfig, insertCampaign } from './status-fixture.js';

let store: DatabaseHandle;
let clock: ManualClock;
let catalog: CampaignCatalog;
beforeEach(async () => {
  store = await openTestStore();
  clock = new ManualClock();
  await migrateToLatest(store.db, { clock });
  catalog = createCampaignCatalog(store.db, silentLogger(), { now: () => clock.now(), checkEveryMs: 1000 });
});
afterEach(async () => {
  await store.close();
});

const ofAccount = (account: string) => (c: { config: { account?: string | undefined } }) => c.config.account === account;

describe('the campaign catalog shared by the accounts’ engines', () => {
  it('each view dials its own account’s campaigns and finds any campaign; one object per campaign for all views', async () => {
    const a = await insertCampaign(store.db, campaignConfig('a-1', { account: 'a' }));
    const b = await insertCampaign(store.db, campaignConfig('b-1', { account: 'b' }));
    const views = ['a', 'b'].map((name) => createCampaignView(catalog, ofAccount(name)));
    await Promise.all(views.map((v) => v.refresh(true)));
    expect([...views[0]!.values()].map((c) => c.name)).toEqual(['a-1']);
    expect([...views[1]!.values()].map((c) => c.name)).toEqual(['b-1']);
    expect(views[0]!.owns(b)).toBe(false);
    expect(views[0]!.scope()).toEqual([a]);
    expect(views[0]!.get(b)?.name).toBe('b-1');
    // The same runtime object behind both views: the settings are parsed once for the daemon.
    expect(views[0]!.get(a)).toBe(views[1]!.get(a));
    const all = createCampaignView(catalog);
    expect(all.scope()).toBeUndefined();
    expect([...all.values()].map((c) => c.name).sort()).toEqual(['a-1', 'b-1']);
  });

  it('forced reads asked together share one read; one asked during a read is served by a read that starts after it', async () => {
    await insertCampaign(store.db, campaignConfig('a-1', { account: 'a' }));
    const versions = new Set<string>();
    await Promise.all(Array.from({ length: 20 }, () => catalog.refresh(true).then(() => versions.add(catalog.version()))));
    // 20 engines starting at once: the first read, and at most one more for those that asked during it.
    expect(Number(catalog.version().split('|')[0])).toBeLessThanOrEqual(2);

    const first = catalog.refresh(true);
    // Written while that read may already have looked: a forced read asked now must see it.
    await insertCampaign(store.db, campaignConfig('a-2', { account: 'a' }));
    const second = catalog.refresh(true);
    await Promise.all([first, second]);
    expect([...catalog.all().values()].map((c) => c.name)).toContain('a-2');
  });

  it('every engine’s control loop wakes its dial loop for a change, whichever engine read it first', async () => {
    const id = await insertCampaign(store.db, campaignConfig('a-1', { account: 'a' }));
    await catalog.refresh(true);
    const woken = [0, 0, 0];
    // Each loop's finished checks, counted: a check's read is real I/O the manual clock does not wait for.
    const checks = [0, 0, 0];
    const loops = woken.map((_, i) => {
      const view = createCampaignView(catalog, ofAccount('a'));
      const counted = { ...view, refresh: async (force?: boolean) => view.refresh(force).finally(() => checks[i]!++) };
      return createControlLoop({ clock, logger: silentLogger(), campaigns: counted, wakeDial: () => woken[i]!++ });
    });
    /** One second on, once every loop finished the check it then began. */
    const second = async (): Promise<void> => {
      const before = [...checks];
      await clock.advance(1000);
      await waitUntil(() => checks.every((n, i) => n > before[i]!), { timeoutMs: 10_000 });
    };
    loops.forEach((l) => l.start());
    await second();
    expect(woken).toEqual([0, 0, 0]);
    await store.db.updateTable('campaigns').set({ state: 'paused', updated_at: 5 }).where('id', '=', id).execute();
    await second();
    expect(woken).toEqual([1, 1, 1]);
    expect(catalog.get(id)?.state).toBe('paused');
    await second();
    await second();
    expect(woken).toEqual([1, 1, 1]);
    loops.forEach((l) => l.stop());
  });
});

import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { campaignControlRows } from '../store/campaigns.js';
import { suppressedNumbers } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { loadRuntimeCampaigns, type RuntimeCampaign } from './runtime-campaign.js';

// Every campaign and the suppression list as last read, ONE copy for the daemon: each
// account's engine sees its own campaigns through a view of this catalog (campaign-view.ts).
// A copy per engine made 200 accounts keep 200 × every campaign (and 200 × the suppression
// list) and parse every campaign's settings 200 times at each change.

export interface CampaignCatalog {
  get(id: number): RuntimeCampaign | undefined;
  all(): ReadonlyMap<number, RuntimeCampaign>;
  /** Changes whenever a campaign's state, settings or problem changed (and at each forced load). */
  version(): string;
  /**
   * Reloads the campaigns when their control rows changed; `force` reloads them in any case,
   * from a read that starts after this call (a caller that just wrote a campaign sees it).
   */
  refresh(force?: boolean): Promise<void>;
  /** Rereads the suppression list, from a read that starts after this call. */
  refreshSuppressions(): Promise<void>;
  suppressed(phone: string): boolean;
}

/**
 * Runs `load` for every caller, sharing runs: a caller waits for a run that STARTED after
 * its call (one already under way may have read too early), so callers that arrive while
 * one runs share the next.
 */
function sharedRuns(load: () => Promise<void>): () => Promise<void> {
  let asked = 0;
  let done = 0;
  let running: Promise<void> | null = null;
  return async () => {
    const ticket = ++asked;
    while (done < ticket) {
      running ??= (async () => {
        const covers = asked;
        try {
          await load();
          done = Math.max(done, covers);
        } finally {
          running = null;
        }
      })();
      await running;
    }
  };
}

/** Reads shared by every engine of the daemon; `checkEveryMs`: unforced checks closer together than this share one read. */
export function createCampaignCatalog(db: Kysely<Database>, log: Logger, opts: { now: () => number; checkEveryMs: number }): CampaignCatalog {
  let campaigns = new Map<number, RuntimeCampaign>();
  let rowsKey = '';
  let loads = 0;
  let suppressed = new Set<string>();
  let checkedAt = Number.NEGATIVE_INFINITY;
  let lastCheck: Promise<void> = Promise.resolve();

  const load = sharedRuns(async () => {
    // The control rows first: a change made between the two reads is then in the campaigns
    // but not in rowsKey, and the next check loads again (the other order could miss it).
    const rows = await campaignControlRows(db);
    const loaded = await loadRuntimeCampaigns(db);
    rowsKey = controlKey(rows);
    campaigns = new Map(loaded.map((c) => [c.id, c]));
    loads++;
    log.debug({ campaigns: campaigns.size }, 'campaigns loaded');
  });
  const check = sharedRuns(async () => {
    if (controlKey(await campaignControlRows(db)) !== rowsKey) await load();
  });
  const loadSuppressions = sharedRuns(async () => {
    suppressed = await suppressedNumbers(db);
  });

  return {
    get: (id) => campaigns.get(id),
    all: () => campaigns,
    version: () => `${loads}|${rowsKey}`,
    async refresh(force = false) {
      if (force) return load();
      // Every engine checks each second: one read (finished or still under way) serves them all.
      if (opts.now() - checkedAt < opts.checkEveryMs / 2) return lastCheck;
      checkedAt = opts.now();
      lastCheck = check();
      return lastCheck;
    },
    refreshSuppressions: loadSuppressions,
    suppressed: (phone) => suppressed.has(phone),
  };
}

function controlKey(rows: readonly { id: number; state: string; updated_at: number; problem: string | null }[]): string {
  return rows.map((r) => `${r.id}:${r.state}:${r.updated_at}:${r.problem ?? ''}`).join('|');
}

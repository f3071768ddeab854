import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { syncRemoteLeads, type RemoteLeadSource } from '../leads/remote-sync.js';
import type { Logger } from '../log/logger.js';
import { getCampaignByName } from '../store/campaigns.js';
import type { Database } from '../store/types.js';
import type { Clock } from '../time/clock.js';

// Campaigns whose leads live in a service campaign (leads.remote_campaign_id) pick up
// new leads at start and then every few minutes.

const EVERY_MS = 5 * 60_000;

/** Starts the periodic sync; returns a function that stops it. */
export function startRemoteLeadSync(opts: {
  db: Kysely<Database>;
  source: RemoteLeadSource;
  campaigns: () => CampaignConfig[];
  clock: Clock;
  logger: Logger;
  /** Called after new leads were stored, so the scheduler looks at once. */
  onNewLeads: () => void;
}): () => void {
  let stopped = false;
  let cancel: () => void = () => {};
  const round = async (): Promise<void> => {
    for (const cfg of opts.campaigns()) {
      const remoteCampaignId = cfg.leads.remoteCampaignId;
      if (remoteCampaignId === undefined || stopped) continue;
      const row = await getCampaignByName(opts.db, cfg.name);
      if (!row) continue;
      try {
        const summary = await syncRemoteLeads(opts.db, opts.source, { id: row.id, remoteCampaignId, defaultCountry: cfg.defaultCountry }, opts.clock.now());
        if (summary.added > 0 || summary.updated > 0) {
          opts.logger.info({ campaign: cfg.name, remoteCampaignId, ...summary }, 'service campaign leads synced');
          opts.onNewLeads();
        }
      } catch (err) {
        opts.logger.warn({ campaign: cfg.name, remoteCampaignId, err: err instanceof Error ? err.message : String(err) }, 'could not read the service campaign leads; will retry');
      }
    }
  };
  const schedule = (delay: number): void => {
    cancel = opts.clock.setTimer(delay, () => {
      void round().finally(() => {
        if (!stopped) schedule(EVERY_MS);
      });
    });
  };
  schedule(0);
  return () => {
    stopped = true;
    cancel();
  };
}

import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { Database } from '../../store/types.js';
import type { CampaignView } from '../campaign-view.js';
import { errText, type EngineLoop } from '../engine-types.js';
import { REMOTE_FOLLOW_MS } from '../policy.js';
import type { EngineClient } from '../ports.js';
import { followRemoteCampaigns } from '../remote-campaigns.js';

// The remote-sync loop: campaigns linked to a service campaign follow its start/stop
// (rule 8), read once at start and then every minute (remote-campaigns.ts does the work).

export interface RemoteSyncDeps {
  db: Kysely<Database>;
  client: EngineClient;
  clock: Clock;
  logger: Logger;
  campaigns: CampaignView;
  /** A campaign's state changed: the dial loop looks again. */
  wakeDial: () => void;
}

export function createRemoteSyncLoop(deps: RemoteSyncDeps): EngineLoop {
  const { clock, campaigns } = deps;
  /** The remote status last seen per service campaign: only changes are acted on. */
  const remoteSeen = new Map<number, string>();
  let stopping = false;
  let cancel: (() => void) | null = null;

  function schedule(delay: number): void {
    cancel = clock.setTimer(delay, () => {
      if (stopping) return;
      followRemoteCampaigns(deps.db, deps.client, campaigns.values(), remoteSeen, clock.now(), deps.logger)
        .then(async (changed) => {
          if (changed) {
            await campaigns.refresh(true);
            deps.wakeDial();
          }
        })
        .catch((err: unknown) => deps.logger.warn({ err: errText(err) }, 'could not read the linked service campaigns'))
        .finally(() => {
          if (!stopping) schedule(REMOTE_FOLLOW_MS);
        });
    });
  }

  return {
    start() {
      stopping = false;
      schedule(0);
    },
    stop() {
      stopping = true;
      cancel?.();
    },
    done: () => Promise.resolve(),
  };
}

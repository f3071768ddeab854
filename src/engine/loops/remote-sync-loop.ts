import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { Database } from '../../store/types.js';
import type { CampaignView } from '../campaign-view.js';
import { errText, type EngineLoop } from '../engine-types.js';
import { REMOTE_FOLLOW_MS } from '../policy.js';
import type { EngineClient } from '../ports.js';
import { followRemoteCampaigns } from '../remote-campaigns.js';
import { createTimerLoop } from './timer-loop.js';

// The remote-sync loop: campaigns linked to a service campaign follow its start/stop
// (rule 8), read at once and then every minute (remote-campaigns.ts does the work).

export function createRemoteSyncLoop(deps: {
  db: Kysely<Database>;
  client: EngineClient;
  clock: Clock;
  logger: Logger;
  campaigns: CampaignView;
  /** A campaign's state changed: the dial loop looks again. */
  wakeDial: () => void;
}): EngineLoop {
  const { clock, campaigns } = deps;
  /** The remote status last seen per service campaign: only changes are acted on. */
  const remoteSeen = new Map<number, string>();
  return createTimerLoop(clock, {
    firstDelayMs: 0,
    everyMs: REMOTE_FOLLOW_MS,
    async run() {
      const changed = await followRemoteCampaigns(deps.db, deps.client, campaigns.values(), remoteSeen, clock.now(), deps.logger);
      if (changed) {
        await campaigns.refresh(true);
        deps.wakeDial();
      }
    },
    onError: (err) => deps.logger.warn({ err: errText(err) }, 'could not read the linked service campaigns'),
  });
}

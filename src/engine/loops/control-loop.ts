import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { CampaignView } from '../campaign-view.js';
import { errText, type EngineLoop } from '../engine-types.js';
import { CONTROL_CHECK_MS } from '../policy.js';

// The control loop: operator commands (campaign pause/resume, edits) change rows from
// other processes; a cheap look each second makes them take effect within a second
// without waking the dial loop otherwise. Every instance runs it (a standby's webhook
// path reads the campaigns too).

export interface ControlLoopDeps {
  clock: Clock;
  logger: Logger;
  campaigns: CampaignView;
  /** The campaigns changed: the dial loop looks again. */
  wakeDial: () => void;
}

export function createControlLoop(deps: ControlLoopDeps): EngineLoop {
  const { clock, campaigns } = deps;
  let stopping = false;
  let cancel: (() => void) | null = null;

  function schedule(): void {
    cancel = clock.setTimer(CONTROL_CHECK_MS, () => {
      if (stopping) return;
      const before = campaigns.version();
      campaigns
        .refresh()
        .then(() => {
          if (campaigns.version() !== before) deps.wakeDial();
        })
        .catch((err: unknown) => deps.logger.warn({ err: errText(err) }, 'campaign check failed'))
        .finally(() => {
          if (!stopping) schedule();
        });
    });
  }

  return {
    start() {
      stopping = false;
      schedule();
    },
    stop() {
      stopping = true;
      cancel?.();
    },
    done: () => Promise.resolve(),
  };
}

import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../time/clock.js';
import type { CampaignView } from '../campaign-view.js';
import { errText, type EngineLoop } from '../engine-types.js';
import { CONTROL_CHECK_MS } from '../policy.js';
import { createTimerLoop } from './timer-loop.js';

// The control loop: operator commands (campaign pause/resume, edits) change rows from
// other processes; a cheap look each second makes them take effect within a second
// without waking the dial loop otherwise. Every instance runs it (a standby's webhook
// path reads the campaigns too).

export function createControlLoop(deps: {
  clock: Clock;
  logger: Logger;
  campaigns: CampaignView;
  /** The campaigns changed: the dial loop looks again. */
  wakeDial: () => void;
}): EngineLoop {
  const { campaigns } = deps;
  // The version this loop last woke the dial loop for: the catalog is shared by every
  // account's engine, so another engine's read may be the one that saw the change.
  let seen = campaigns.version();
  return createTimerLoop(deps.clock, {
    firstDelayMs: CONTROL_CHECK_MS,
    everyMs: CONTROL_CHECK_MS,
    async run() {
      await campaigns.refresh();
      const now = campaigns.version();
      if (now === seen) return;
      seen = now;
      deps.wakeDial();
    },
    onError: (err) => deps.logger.warn({ err: errText(err) }, 'campaign check failed'),
  });
}

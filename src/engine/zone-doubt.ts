import type { Logger } from '../log/logger.js';
import type { Clock } from '../time/clock.js';
import { ZONE_WARNING_EVERY_MS } from './policy.js';

/**
 * The service's times disagree with api.server_timezone: said loudly, at most every
 * 10 minutes (webhooks and listings both notice it). Matching and settling already
 * refuse to let it cause a second call.
 */
export function createZoneDoubtWarning(clock: Clock, log: Logger, serverTimezone: string): (detail: string) => void {
  let lastWarningAt = Number.NEGATIVE_INFINITY;
  return (detail) => {
    const now = clock.now();
    if (now - lastWarningAt < ZONE_WARNING_EVERY_MS) return;
    lastWarningAt = now;
    log.warn(
      { detail, serverTimezone },
      "the service's zone-less timestamps do not read right in api.server_timezone; set it to the service's zone (calls are still matched, and unknown attempts are not dialled again while in doubt)",
    );
  };
}

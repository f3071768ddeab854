// One polling round run by hand, outside an engine: the deps and options a test passes
// to pollOnce over a stack, with the parts a test controls (clock, client, durations).
import { CLOCK_SKEW_MS, CONFIRM_WINDOW_MS, DEFAULT_MAX_DURATION_SECONDS, STUCK_GRACE_MS } from '../../src/engine/policy.js';
import type { PollerDeps, PollerOptions } from '../../src/engine/poller.js';
import { runtimeCampaign } from '../../src/engine/runtime-campaign.js';
import { silentLogger } from '../../src/log/logger.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import type { Stack } from './stack.js';

export const POLLER_OPTIONS: PollerOptions = {
  clockSkewMs: CLOCK_SKEW_MS,
  stuckGraceMs: STUCK_GRACE_MS,
  defaultMaxDurationSeconds: DEFAULT_MAX_DURATION_SECONDS,
  serverTimezone: 'UTC',
  confirmWindowMs: CONFIRM_WINDOW_MS,
};

/** pollOnce's deps over the stack's store and client, campaigns as they are now. */
export async function pollerDeps(s: Stack, overrides: Partial<PollerDeps> = {}): Promise<PollerDeps> {
  const campaigns = (await s.db.selectFrom('campaigns').selectAll().execute()).map(runtimeCampaign);
  return {
    db: s.db,
    commit: createGroupCommit(s.db),
    logger: silentLogger(),
    now: () => s.clock.now(),
    client: s.engineClient,
    campaign: (id) => campaigns.find((c) => c.id === id),
    onSlotFreed: () => undefined,
    maxDurationSeconds: () => null,
    ...overrides,
  };
}

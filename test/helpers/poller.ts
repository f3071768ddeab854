// One polling round run by hand, outside an engine: the deps and options a test passes
// to pollOnce over a stack, with the parts a test controls (clock, client, durations).
import type { PollerDeps, PollerOptions } from '../../src/engine/poller.js';
import { runtimeCampaign } from '../../src/engine/runtime-campaign.js';
import { silentLogger } from '../../src/log/logger.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import type { Stack } from './stack.js';

export const POLLER_OPTIONS: PollerOptions = {
  clockSkewMs: 60_000,
  stuckGraceMs: 300_000,
  defaultMaxDurationSeconds: 1200,
  serverTimezone: 'UTC',
  confirmWindowMs: 24 * 3_600_000,
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

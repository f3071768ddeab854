// Leads moved to another campaign by an on_result rule are finished leads on the dashboard:
// a segment of their own in the progress bar, only where a campaign has some.
import { describe, expect, it } from 'vitest';
import { leadSegments } from '../../src/dashboard/render-card.js';
import { finishedOf } from '../../src/dashboard/view.js';
import type { CampaignStatus } from '../../src/status/types.js';

function campaign(moved: number): CampaignStatus {
  return {
    leads: { total: 10 + moved, pending: 4, calling: 2, retry_scheduled: 1, completed: 2, reached_max_retries: 1, invalid: 0, suppressed: 0, cancelled: 0, moved, confirming: 0 },
  } as CampaignStatus;
}

describe('dashboard: moved leads', () => {
  it('count as finished and get a segment after the other final states', () => {
    expect(finishedOf(campaign(3))).toBe(6);
    const labels = leadSegments(campaign(3)).map((s) => s.label);
    expect(labels).toEqual(['completed', 'max retries', 'invalid', 'suppressed', 'cancelled', 'moved', 'calling', 'retry scheduled', 'pending']);
  });

  it('add nothing where no lead was moved', () => {
    expect(leadSegments(campaign(0)).map((s) => s.label)).not.toContain('moved');
  });
});

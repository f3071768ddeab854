// The dashboard knows cancelled leads: final in the lead progress, a segment of their own
// among the outcomes, and a colour in the stylesheet.
import { describe, expect, it } from 'vitest';
import { leadSegments } from '../../src/dashboard/render-card.js';
import { STYLESHEET } from '../../src/dashboard/asset-style.js';
import { finishedOf } from '../../src/dashboard/view.js';
import type { CampaignStatus } from '../../src/status/types.js';

const c = {
  leads: { total: 10, pending: 2, calling: 1, retry_scheduled: 1, completed: 2, reached_max_retries: 1, invalid: 0, suppressed: 0, cancelled: 3, moved: 0, confirming: 0 },
} as CampaignStatus;

describe('dashboard: cancelled leads', () => {
  it('counts them as finished and shows them as an outcome with its own colour', () => {
    expect(finishedOf(c)).toBe(6);
    const segments = leadSegments(c);
    expect(segments.find((s) => s.label === 'cancelled')).toEqual({ label: 'cancelled', value: 3, cls: 's-cancelled' });
    expect(segments.slice(0, 5).map((s) => s.label)).toContain('cancelled');
    expect(STYLESHEET).toContain('.s-cancelled{');
  });
});

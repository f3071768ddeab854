// A campaign with callbacks on the dashboard: its card shows the same counts as `status`
// (scheduled, placed, refused, dropped); a campaign without callbacks shows no such cell.
import { describe, expect, it } from 'vitest';
import type { CampaignStatus } from '../../src/status/types.js';
import { campaignStatus, campaignsPage } from '../helpers/dashboard-campaigns.js';

const campaign = (name: string, callbacks?: CampaignStatus['callbacks']): CampaignStatus => campaignStatus(name, callbacks ? { callbacks } : {});
const page = campaignsPage;

describe('dashboard: callbacks', () => {
  it('the card of a campaign with callbacks shows scheduled, placed, refused and dropped', () => {
    const text = page([campaign('cb', { scheduled: 3, placed: 1250, refused: 2, dropped: 1 })]);
    expect(text).toContain('<h3>Callbacks</h3>');
    expect(text).toContain('<b class="cb-scheduled">3</b> scheduled · <span class="cb-placed">1,250</span> placed');
    expect(text).toContain('<span class="cb-refused">2</span> refused · <span class="cb-dropped">1</span> dropped');
  });

  it('a campaign without callbacks has no callbacks cell', () => {
    expect(page([campaign('plain')])).not.toContain('Callbacks');
  });
});

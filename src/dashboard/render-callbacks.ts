import type { CampaignStatus } from '../status/types.js';
import { fmt } from './charts.js';
import { html, type Html } from './html.js';

// A campaign's callbacks on the dashboard (README, "Callbacks the person asks for"): the
// same counts as `status`, one per asking call: still to place, placed, refused, and
// dropped (the lead ended otherwise first).

/** The card's callbacks cell; nothing for a campaign without callbacks. */
export function renderCallbacks(c: CampaignStatus): Html | '' {
  const cb = c.callbacks;
  if (!cb) return '';
  return html`<div class="cell callbacks"><h3>Callbacks</h3><p><b class="cb-scheduled">${fmt(cb.scheduled)}</b> scheduled · <span class="cb-placed">${fmt(cb.placed)}</span> placed</p><p><small><span class="cb-refused">${fmt(cb.refused)}</span> refused · <span class="cb-dropped">${fmt(cb.dropped)}</span> dropped</small></p></div>`;
}

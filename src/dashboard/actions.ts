import type { Kysely } from 'kysely';
import { getCampaignByName, setCampaignState } from '../store/campaigns.js';
import { recordEvent } from '../store/events.js';
import type { CampaignState, Database } from '../store/types.js';

// Pause and resume from the dashboard: the same store writes as `campaignd campaign
// pause|resume` (src/cli/campaign.ts), recorded as done by the dashboard.

export type CampaignAction = 'pause' | 'resume';

const TARGET: Record<CampaignAction, CampaignState> = { pause: 'paused', resume: 'running' };

export type ActionResult = { ok: true; from: CampaignState; to: CampaignState } | { ok: false; status: 404 | 409; message: string };

export async function changeCampaignState(db: Kysely<Database>, name: string, action: CampaignAction, now: number): Promise<ActionResult> {
  const row = await getCampaignByName(db, name);
  if (!row) return { ok: false, status: 404, message: `no campaign named "${name}"` };
  const to = TARGET[action];
  // As the CLI: a completed campaign is reopened by "campaign start", not by resume.
  if (row.state === 'completed' && action === 'resume') return { ok: false, status: 409, message: `campaign "${name}" is completed; use "campaignd campaign start ${name}" to run it again` };
  await setCampaignState(db, name, to, now);
  await recordEvent(db, { at: now, campaignId: row.id, kind: 'state-changed', data: { from: row.state, to, by: 'dashboard' } });
  return { ok: true, from: row.state, to };
}

import type { Kysely } from 'kysely';
import { getCampaignByName, setCampaignState } from '../store/campaigns.js';
import { recordEvent } from '../store/events.js';
import type { CampaignState, Database } from '../store/types.js';

// Start, stop, pause and resume from the dashboard and the API: the same store writes as
// `campaignd campaign start|stop|pause|resume` (src/cli/campaign.ts), recorded with who did it.

export type CampaignAction = 'start' | 'stop' | 'pause' | 'resume';

export const CAMPAIGN_ACTION_TARGET: Record<CampaignAction, CampaignState> = { start: 'running', resume: 'running', pause: 'paused', stop: 'stopped' };

export type ActionResult =
  | { ok: true; from: CampaignState; to: CampaignState; changed: boolean }
  | { ok: false; status: 404 | 409; message: string };

export async function changeCampaignState(db: Kysely<Database>, name: string, action: CampaignAction, now: number, by: 'dashboard' | 'api'): Promise<ActionResult> {
  const row = await getCampaignByName(db, name);
  if (!row) return { ok: false, status: 404, message: `no campaign named "${name}"` };
  const to = CAMPAIGN_ACTION_TARGET[action];
  // As the CLI: a completed campaign is reopened by "start", not by resume.
  if (row.state === 'completed' && action === 'resume') return { ok: false, status: 409, message: `campaign "${name}" is completed; use "campaignd campaign start ${name}" to run it again` };
  if (row.state === to) return { ok: true, from: row.state, to, changed: false };
  await setCampaignState(db, name, to, now);
  await recordEvent(db, { at: now, campaignId: row.id, kind: 'state-changed', data: { from: row.state, to, by } });
  return { ok: true, from: row.state, to, changed: true };
}

import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { setCampaignStateById } from '../store/campaigns.js';
import { recordEvent } from '../store/events.js';
import type { CampaignState, Database } from '../store/types.js';
import type { EngineClient } from './ports.js';
import type { RuntimeCampaign } from './runtime-campaign.js';

// A campaign linked to a service campaign (leads.remote_campaign_id) follows that
// campaign's start/stop (rule 8). Only changes are acted on, so an operator's local
// pause is not undone by a remote status that merely stayed the same.

const RUNNING_REMOTE = new Set(['in-progress', 'active']);

/** What the remote status means locally, or null for "no opinion" (draft, unknown). */
function localStateFor(remote: string): CampaignState | null {
  if (remote === 'stopped') return 'stopped';
  if (RUNNING_REMOTE.has(remote)) return 'running';
  return null;
}

/** Reads the linked service campaigns and applies their start/stop changes. Returns true when a state changed. */
export async function followRemoteCampaigns(
  db: Kysely<Database>,
  client: EngineClient,
  campaigns: Iterable<RuntimeCampaign>,
  lastSeen: Map<number, string>,
  now: number,
  logger: Logger,
): Promise<boolean> {
  const linked = [...campaigns].filter((c) => c.config.leads.remoteCampaignId !== undefined);
  if (linked.length === 0 || !client.remoteCampaignStatuses) return false;
  const statuses = await client.remoteCampaignStatuses();
  let changed = false;
  for (const c of linked) {
    const remoteId = c.config.leads.remoteCampaignId as number;
    const remote = statuses.get(remoteId);
    if (remote === undefined) continue;
    const previous = lastSeen.get(remoteId);
    lastSeen.set(remoteId, remote);
    if (previous === remote) continue;
    const wanted = localStateFor(remote);
    // First sight: only a stopped remote campaign is honoured (it must not be dialled).
    if (wanted === null || (previous === undefined && wanted !== 'stopped')) continue;
    if (c.state === wanted || c.state === 'completed') continue;
    await setCampaignStateById(db, c.id, wanted, now);
    await recordEvent(db, { at: now, campaignId: c.id, kind: 'state-changed', data: { from: c.state, to: wanted, by: `service campaign ${remoteId} (${remote})` } });
    logger.info({ campaign: c.name, remoteCampaign: remoteId, remote, state: wanted }, 'following the linked service campaign');
    changed = true;
  }
  return changed;
}

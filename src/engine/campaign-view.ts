import type { Kysely } from 'kysely';
import type { Logger } from '../log/logger.js';
import { campaignControlRows } from '../store/campaigns.js';
import { suppressedNumbers } from '../store/suppressions.js';
import type { Database } from '../store/types.js';
import { loadRuntimeCampaigns, type RuntimeCampaign } from './runtime-campaign.js';

// The campaigns and the suppression list as the engine last read them. Every loop and
// the webhook path share this one copy; a reload or an operator's change refreshes it.

export interface CampaignView {
  /** Any campaign (a webhook or an outcome may concern another account's). */
  get(id: number): RuntimeCampaign | undefined;
  /** The campaigns this engine dials and polls (its account's). */
  values(): IterableIterator<RuntimeCampaign>;
  /** Whether the campaign is one of values(). */
  owns(id: number): boolean;
  /** The ids of values() for the store's scoped reads; undefined when this engine has every campaign. */
  scope(): readonly number[] | undefined;
  /** Changes whenever a campaign's state, settings or problem changed. */
  version(): string;
  /** Reloads the campaigns when their control rows changed (always when `force`). */
  refresh(force?: boolean): Promise<void>;
  refreshSuppressions(): Promise<void>;
  /** On the suppression list as last read (the claim checks the store again). */
  suppressed(phone: string): boolean;
}

/** `dials`: which campaigns this engine dials (its account's); absent: all of them. */
export function createCampaignView(db: Kysely<Database>, log: Logger, dials?: (c: RuntimeCampaign) => boolean): CampaignView {
  let campaigns = new Map<number, RuntimeCampaign>();
  let own = campaigns;
  let version = '';
  let suppressed = new Set<string>();
  return {
    get: (id) => campaigns.get(id),
    values: () => own.values(),
    owns: (id) => !dials || own.has(id),
    scope: () => (dials ? [...own.keys()] : undefined),
    version: () => version,
    async refresh(force = false) {
      const rows = await campaignControlRows(db);
      const next = rows.map((r) => `${r.id}:${r.state}:${r.updated_at}:${r.problem ?? ''}`).join('|');
      if (!force && next === version) return;
      version = next;
      campaigns = new Map((await loadRuntimeCampaigns(db)).map((c) => [c.id, c]));
      own = dials ? new Map([...campaigns].filter(([, c]) => dials(c))) : campaigns;
      log.debug({ campaigns: campaigns.size }, 'campaigns loaded');
    },
    async refreshSuppressions() {
      suppressed = await suppressedNumbers(db);
    },
    suppressed: (phone) => suppressed.has(phone),
  };
}

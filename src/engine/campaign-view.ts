import type { RuntimeCampaign } from './runtime-campaign.js';
import type { CampaignCatalog } from './campaign-catalog.js';

// One engine's view of the daemon's campaign catalog (campaign-catalog.ts): every campaign
// for the webhook path and outcomes, its own account's for dialing and polling. Every loop
// of the engine shares this view; a reload or an operator's change refreshes the catalog.

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
export function createCampaignView(catalog: CampaignCatalog, dials?: (c: RuntimeCampaign) => boolean): CampaignView {
  // The engine's own campaigns, worked out again only when the catalog changed.
  let ownOf: ReadonlyMap<number, RuntimeCampaign> | null = null;
  let own: ReadonlyMap<number, RuntimeCampaign> = new Map();
  const mine = (): ReadonlyMap<number, RuntimeCampaign> => {
    const all = catalog.all();
    if (!dials) return all;
    if (ownOf !== all) {
      own = new Map([...all].filter(([, c]) => dials(c)));
      ownOf = all;
    }
    return own;
  };
  return {
    get: (id) => catalog.get(id),
    values: () => mine().values(),
    owns: (id) => !dials || mine().has(id),
    scope: () => (dials ? [...mine().keys()] : undefined),
    version: () => catalog.version(),
    refresh: (force) => catalog.refresh(force),
    refreshSuppressions: () => catalog.refreshSuppressions(),
    suppressed: (phone) => catalog.suppressed(phone),
  };
}

import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import type { CampaignRow, CampaignState, Database } from '../store/types.js';
import { leadLocalWindow, windowFromCampaign, type WindowSpec } from '../time/window.js';

/** The engine's view of one campaign: its row, its normalised file and its windows. */
export interface RuntimeCampaign {
  id: number;
  name: string;
  state: CampaignState;
  problem: string | null;
  config: CampaignConfig;
  /** Resolved zone of the window (the file's, else the assistant's, else UTC). */
  timezone: string;
  window: WindowSpec;
  /** The called person's window for a lead zone, when the campaign sets lead_local_hours. */
  leadWindow(zone: string | null): WindowSpec | null;
}

/** Builds the runtime view of a campaign row (config_json holds the normalised file). */
export function runtimeCampaign(row: CampaignRow): RuntimeCampaign {
  const config = JSON.parse(row.config_json) as CampaignConfig;
  const timezone = row.timezone ?? config.timezone ?? 'UTC';
  const leadWindows = new Map<string, WindowSpec>();
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    problem: row.problem,
    config,
    timezone,
    window: windowFromCampaign(config, timezone),
    leadWindow(zone) {
      const hours = config.leadLocalHours;
      if (!hours) return null;
      // Without the person's own zone, the campaign's zone is the best guess we have.
      const key = zone ?? timezone;
      let spec = leadWindows.get(key);
      if (!spec) {
        spec = leadLocalWindow(hours, key);
        leadWindows.set(key, spec);
      }
      return spec;
    },
  };
}

/** Every campaign row as the engine sees it. */
export async function loadRuntimeCampaigns(db: Kysely<Database>): Promise<RuntimeCampaign[]> {
  const rows = await db.selectFrom('campaigns').selectAll().orderBy('id').execute();
  return rows.map(runtimeCampaign);
}

import type { Kysely } from 'kysely';
import type { CampaignConfig } from '../config/types.js';
import { buildPersonWindow, numberRegions, personZones, type PersonInputs, type PersonWindow } from '../rules/person-window.js';
import { listCampaignsById } from '../store/campaigns.js';
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
  /**
   * Everything about the called person that limits when they may be called (docs/design.md §11):
   * their zone(s) (the lead's timezone column, else from the number, else the campaign's),
   * lead_local_hours in each, the calling rules of the number's regions, and attempt caps.
   */
  person(phone: string, leadZone: string | null): PersonWindow;
}

/** Person windows kept per campaign: a few hundred zone × region combinations at most in practice. */
const MAX_PERSON_WINDOWS = 4_096;

/** Builds the runtime view of a campaign row (config_json holds the normalised file). */
export function runtimeCampaign(row: CampaignRow): RuntimeCampaign {
  const config = JSON.parse(row.config_json) as CampaignConfig;
  const timezone = row.timezone ?? config.timezone ?? 'UTC';
  const leadWindows = new Map<string, WindowSpec>();
  const window = windowFromCampaign(config, timezone);
  const policy = config.callingPolicy ?? { rules: [], caps: [] };
  const inputs: PersonInputs = { campaignZone: timezone, campaignWindow: window, leadLocalHours: config.leadLocalHours, policy };
  const persons = new Map<string, PersonWindow>();
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    problem: row.problem,
    config,
    timezone,
    window,
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
    person(phone, leadZone) {
      const { zones, source } = personZones(phone, leadZone, timezone);
      // Regions matter only when there are rules; without them every number shares one key per zone list.
      const regions = policy.rules.length > 0 ? numberRegions(phone) : [];
      const key = `${source}|${zones.join(',')}|${regions.join(',')}`;
      let p = persons.get(key);
      if (!p) {
        p = buildPersonWindow(inputs, zones, source, regions);
        if (persons.size >= MAX_PERSON_WINDOWS) persons.clear();
        persons.set(key, p);
      }
      return p;
    },
  };
}

/** Every campaign row as the engine sees it. */
export async function loadRuntimeCampaigns(db: Kysely<Database>): Promise<RuntimeCampaign[]> {
  const rows = await listCampaignsById(db);
  return rows.map(runtimeCampaign);
}

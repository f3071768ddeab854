// The daemon config and campaign files that match a store built by big-store.ts, so that a
// real `campaignd run` dials the leads already in it:
//  - one campaign file per campaign row, named after it (a file without `name:` gives the
//    campaign its base name, and sync-config.ts pairs files with rows by name), with the
//    settings big-store gave the rows (benchCampaign: assistant 1, UTC, every day all day);
//  - one lead file per campaign holding that campaign's numbers, and a `leads-imported`
//    event naming the file and its fingerprint (size:mtime). syncLeadFiles imports a lead
//    file at start only when that fingerprint changed, so the daemon starts as one that
//    loaded its files on an earlier run: it works the stored leads without re-importing.
import fs from 'node:fs';
import path from 'node:path';
import { getCampaignByName } from '../../src/store/campaigns.js';
import { openDatabase } from '../../src/store/database.js';
import { recordEvent } from '../../src/store/events.js';
import { bigStoreCampaignName, bigStoreCampaignPhones } from './big-store.js';
import { benchCampaign } from './engine-stack.js';

export interface BigStoreConfigOptions {
  /** The store built by buildBigStore (the config names it; CAMPAIGND_DATABASE may override). */
  dbFile: string;
  leads: number;
  campaigns: number;
  httpPort: number;
  /** The daemon's account-wide live-call limit. */
  accountMaxCalls: number;
  requestsPerMinute: number;
  burst: number;
}

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** Writes campaignd.yaml, campaigns/ and leads/ into `dir` and records the imports in the store; returns the config path. */
export async function writeBigStoreConfig(dir: string, opts: BigStoreConfigOptions): Promise<string> {
  fs.mkdirSync(path.join(dir, 'campaigns'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'leads'), { recursive: true });
  const configPath = path.join(dir, 'campaignd.yaml');
  // base_url is a placeholder: each run points it at its simulator (CAMPAIGND_API_BASE_URL).
  const yaml = [
    'api:',
    '  base_url: http://127.0.0.1:9',
    `  rate_limit: { requests_per_minute: ${opts.requestsPerMinute}, burst: ${opts.burst} }`,
    `database: ${opts.dbFile}`,
    'campaigns_dir: ./campaigns',
    `http: { listen: "127.0.0.1:${opts.httpPort}" }`,
    `max_calls_in_parallel: ${opts.accountMaxCalls}`,
    '',
  ].join('\n');
  fs.writeFileSync(configPath, yaml);

  const store = openDatabase(opts.dbFile);
  try {
    for (let c = 1; c <= opts.campaigns; c++) {
      const name = bigStoreCampaignName(c);
      const settings = benchCampaign(name, 1);
      const leadFile = path.join(dir, 'leads', `${name}.csv`);
      fs.writeFileSync(leadFile, `phone_number\n${bigStoreCampaignPhones(c, opts.leads, opts.campaigns).join('\n')}\n`);
      const file = {
        assistant_id: settings.assistantId,
        timezone: settings.timezone,
        allowed_days: settings.allowedDays.map((d) => DAYS[d - 1]),
        allowed_hours_start_time: '00:00:00',
        allowed_hours_end_time: '00:00:00',
        max_calls_in_parallel: settings.maxCallsInParallel,
        max_retries: settings.maxRetries,
        retry_interval: settings.retryIntervalSeconds,
        retry_on: settings.retryOn,
        mark_complete_when_no_leads: settings.markCompleteWhenNoLeads,
        leads: { file: `../leads/${name}.csv` },
      };
      // JSON is YAML.
      fs.writeFileSync(path.join(dir, 'campaigns', `${name}.yaml`), `${JSON.stringify(file, null, 2)}\n`);
      const row = await getCampaignByName(store.db, name);
      if (!row) throw new Error(`campaign ${name} is not in ${opts.dbFile}`);
      const stat = fs.statSync(leadFile);
      // The same path and fingerprint syncLeadFiles computes (the campaign file resolves
      // leads.file against its own folder).
      await recordEvent(store.db, { at: Date.now(), campaignId: row.id, kind: 'leads-imported', data: { file: leadFile, fingerprint: `${stat.size}:${stat.mtimeMs}` } });
    }
  } finally {
    // Closing the last connection folds the WAL into the file: the file alone can be copied.
    await store.close();
  }
  return configPath;
}

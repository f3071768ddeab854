// Lead files named in a campaign file (imported at start and on SIGHUP) go through the
// same reader and the same lead_columns as `campaignd leads import`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { syncLeadFiles } from '../../src/lifecycle/sync-config.js';
import { silentLogger } from '../../src/log/logger.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';

let dir: string;
let handle: DatabaseHandle;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-sync-leads-'));
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), 'api:\n  base_url: http://127.0.0.1:9\ndatabase: ":memory:"\ncampaigns_dir: ./campaigns\n');
  handle = openDatabase(':memory:');
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function campaignFile(leadColumns: string): void {
  fs.writeFileSync(
    path.join(dir, 'campaigns', 'spring.yaml'),
    [
      'assistant_id: 1',
      'timezone: Europe/Berlin',
      'allowed_days: [monday]',
      'allowed_hours_start_time: "09:00"',
      'allowed_hours_end_time: "17:00"',
      'default_country: DE',
      'leads: { file: ../export.txt }',
      leadColumns,
      '',
    ].join('\n'),
  );
}

async function syncOnce(now: number): Promise<{ phone_number: string; variables_json: string }[]> {
  const config = await loadConfig(path.join(dir, 'campaignd.yaml'), {});
  expect(config.problems.filter((p) => p.severity === 'error')).toEqual([]);
  const cfg = config.campaigns[0]!;
  await upsertCampaign(handle.db, cfg, { timezone: 'Europe/Berlin' }, now);
  await syncLeadFiles(handle.db, config, { now, logger: silentLogger() });
  return handle.db.selectFrom('leads').select(['phone_number', 'variables_json']).orderBy('id').execute();
}

describe('syncLeadFiles', () => {
  it("reads a UTF-16 tab export through the campaign's lead_columns, and re-reads it when lead_columns change", async () => {
    const text = 'Nummer\tRuf\tVorname\r\n030 1234567\t0151 1234567\tJürgen\r\n';
    fs.writeFileSync(path.join(dir, 'export.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    campaignFile('lead_columns: { phone_number: Nummer, variables: { first_name: Vorname } }');
    expect(await syncOnce(1_000)).toEqual([{ phone_number: '+49301234567', variables_json: '{"Ruf":"0151 1234567","first_name":"Jürgen"}' }]);

    // The same file with another mapping: the pending lead's variables follow it.
    campaignFile('lead_columns: { phone_number: Nummer, secondary_phone_numbers: [Ruf], variables: { vorname: Vorname } }');
    expect(await syncOnce(2_000)).toEqual([{ phone_number: '+49301234567', variables_json: '{"vorname":"Jürgen"}' }]);
    const contacts = await handle.db.selectFrom('lead_contacts').select(['position', 'phone_number']).orderBy('position').execute();
    // The secondary numbers only: the primary is the lead's own phone_number.
    expect(contacts).toEqual([{ position: 1, phone_number: '+491511234567' }]);
  });
});

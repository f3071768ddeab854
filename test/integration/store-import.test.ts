import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { importLeads, type ImportSummary } from '../../src/leads/import.js';
import { readLeadCsv } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { syncSuppressions } from '../../src/store/suppressions.js';
import { openTestStore } from '../helpers/test-store.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

let handle: DatabaseHandle;
let dir: string;
let campaignId: number;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-import-'));
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  campaignId = (await upsertCampaign(handle.db, campaign('spring'), { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function campaign(name: string): CampaignConfig {
  return testCampaignConfig(name, { maxCallsInParallel: 2 });
}

function csv(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

async function load(file: string, opts: { allowDuplicates?: boolean; defaultCountry?: string; now?: number; batchSize?: number; id?: number } = {}): Promise<ImportSummary> {
  const c = { id: opts.id ?? campaignId, allowDuplicates: opts.allowDuplicates ?? false, ...(opts.defaultCountry ? { defaultCountry: opts.defaultCountry } : {}) };
  const summary = await importLeads(handle.db, c, readLeadCsv(file, { ...(opts.defaultCountry ? { defaultCountry: opts.defaultCountry } : {}) }), {
    now: opts.now ?? 1000,
    sourceFile: file,
    ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
  });
  // Every row lands in exactly one bucket.
  expect(summary.accepted + summary.updated + summary.unchanged + summary.duplicates + summary.invalid + summary.suppressed).toBe(summary.read);
  return summary;
}

async function leads() {
  return handle.db.selectFrom('leads').selectAll().where('campaign_id', '=', campaignId).orderBy('id').execute();
}

async function contacts() {
  const rows = await handle.db.selectFrom('lead_contacts').innerJoin('leads', 'leads.id', 'lead_contacts.lead_id').select(['leads.dedupe_key', 'lead_contacts.position', 'lead_contacts.phone_number']).orderBy('leads.id').orderBy('position').execute();
  return rows.map((r) => `${r.dedupe_key}#${r.position}=${r.phone_number}`);
}

const SAMPLE = [
  'phone_number,first_name,timezone,secondary_phone_number_1,secondary_phone_number_2',
  '+15555550100,Ada,America/New_York,+15555550900,',
  '+1 555 555 0101,Ben,,,',
  '12345,Cleo,,,',
  '+15555550100,Ada again,,,',
  '+15555550102,Dev,Nowhere/Zone,,',
  '+15555550103,Eve,,+15555550901,+15555550902',
].join('\r\n');

describe('importLeads', () => {
  it('stores new leads as pending with their contacts, and bad rows as invalid leads with reasons', async () => {
    const file = csv('a.csv', SAMPLE);
    const summary = await load(file, { now: 5000 });
    expect(summary).toMatchObject({ read: 6, accepted: 3, updated: 0, unchanged: 0, duplicates: 1, invalid: 2, suppressed: 0 });
    expect(summary.invalidByReason).toEqual({
      'national number without a country: add a country column or default_country': 1,
      'unknown timezone "Nowhere/Zone"': 1,
    });
    expect(summary.samples).toEqual([
      { line: 4, message: '12345: national number without a country: add a country column or default_country' },
      // The repeated row names the row it repeats.
      { line: 5, message: '+15555550100 duplicates line 2' },
      { line: 6, message: '+15555550102: unknown timezone "Nowhere/Zone"' },
    ]);
    const rows = await leads();
    expect(rows.map((r) => [r.dedupe_key, r.phone_number, r.state, r.state_reason, r.next_due_at, r.contact_position, r.source_line])).toEqual([
      ['+15555550100', '+15555550100', 'pending', null, 5000, 0, 2],
      ['+15555550101', '+15555550101', 'pending', null, 5000, 0, 3],
      [`invalid:${file}:4`, '12345', 'invalid', 'national number without a country: add a country column or default_country', null, 0, 4],
      [`invalid:${file}:6`, '+15555550102', 'invalid', 'unknown timezone "Nowhere/Zone"', null, 0, 6],
      ['+15555550103', '+15555550103', 'pending', null, 5000, 0, 7],
    ]);
    expect(JSON.parse(rows[0]!.variables_json)).toEqual({ first_name: 'Ada' });
    expect(rows[0]!.timezone).toBe('America/New_York');
    // The secondary numbers only: the primary is the lead's own phone_number.
    expect(await contacts()).toEqual([
      '+15555550100#1=+15555550900',
      '+15555550103#1=+15555550901',
      '+15555550103#2=+15555550902',
    ]);
  });

  it('adds nothing twice when the same file is imported again', async () => {
    const file = csv('a.csv', SAMPLE);
    await load(file);
    const before = { leads: await leads(), contacts: await contacts() };
    const again = await load(file, { now: 9999 });
    expect(again).toMatchObject({ read: 6, accepted: 0, updated: 0, unchanged: 3, duplicates: 1, invalid: 2 });
    expect(await leads()).toEqual(before.leads);
    expect(await contacts()).toEqual(before.contacts);
  });

  it('updates changed data of pending leads only, and replaces a fixed invalid row', async () => {
    const file = csv('a.csv', SAMPLE);
    await load(file);
    await handle.db.updateTable('leads').set({ state: 'retry-scheduled' }).where('dedupe_key', '=', '+15555550101').execute();
    fs.writeFileSync(
      file,
      [
        'phone_number,first_name,timezone,secondary_phone_number_1,secondary_phone_number_2',
        '+15555550100,Ada Lovelace,Europe/London,,',
        '+1 555 555 0101,Ben changed,,,',
        '+15555550104,Cleo fixed,,,',
        '+15555550100,Ada again,,,',
        '+15555550102,Dev,Nowhere/Zone,,',
        '+15555550103,Eve,,+15555550901,+15555550902',
      ].join('\n'),
    );
    const summary = await load(file, { now: 7000 });
    expect(summary).toMatchObject({ read: 6, accepted: 1, updated: 1, unchanged: 2, duplicates: 1, invalid: 1 });
    const rows = await leads();
    const byKey = new Map(rows.map((r) => [r.dedupe_key, r]));
    expect(JSON.parse(byKey.get('+15555550100')!.variables_json)).toEqual({ first_name: 'Ada Lovelace' });
    expect(byKey.get('+15555550100')).toMatchObject({ timezone: 'Europe/London', updated_at: 7000 });
    // Not pending any more: keeps what it is being dialled with.
    expect(JSON.parse(byKey.get('+15555550101')!.variables_json)).toEqual({ first_name: 'Ben' });
    // Line 4 was invalid and is now a valid lead: the placeholder is gone.
    expect(byKey.has(`invalid:${file}:4`)).toBe(false);
    expect(byKey.get('+15555550104')).toMatchObject({ state: 'pending', source_line: 4 });
    // Ada's secondary number left the file, so it left the lead; Eve's are as they were.
    expect(await contacts()).toEqual(['+15555550103#1=+15555550901', '+15555550103#2=+15555550902']);
  });

  it('keeps every row as its own lead when the campaign allows duplicates', async () => {
    const file = csv('dup.csv', 'phone_number,n\n+15555550100,1\n+15555550100,2\n+15555550100,3\n');
    expect(await load(file, { allowDuplicates: true })).toMatchObject({ accepted: 3, duplicates: 0 });
    expect((await leads()).map((r) => r.dedupe_key)).toEqual([`${file}:2`, `${file}:3`, `${file}:4`]);
    expect(await load(file, { allowDuplicates: true })).toMatchObject({ accepted: 0, unchanged: 3 });
  });

  it('reads national numbers with the campaign default country', async () => {
    const file = csv('de.csv', 'phone_number,country\n030 1234567,\n(555) 555-0123,US\n');
    expect(await load(file, { defaultCountry: 'DE' })).toMatchObject({ accepted: 2, invalid: 0 });
    expect((await leads()).map((r) => r.phone_number)).toEqual(['+49301234567', '+15555550123']);
  });

  it('stores numbers on the do-not-call list as suppressed', async () => {
    await syncSuppressions(handle.db, ['+15555550101'], 1);
    const summary = await load(csv('a.csv', SAMPLE));
    expect(summary).toMatchObject({ accepted: 2, suppressed: 1 });
    const ben = (await leads()).find((r) => r.phone_number === '+15555550101');
    expect(ben).toMatchObject({ state: 'suppressed', state_reason: 'on the suppression list', next_due_at: null });
  });

  it('keeps campaigns apart: the same number is one lead per campaign', async () => {
    const other = (await upsertCampaign(handle.db, campaign('autumn'), { timezone: 'UTC' }, 1)).id;
    const file = csv('a.csv', SAMPLE);
    await load(file);
    expect(await load(file, { id: other })).toMatchObject({ accepted: 3 });
    const count = await handle.db.selectFrom('leads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(10);
  });

  it('gives the same result across batch boundaries, with duplicates far apart', async () => {
    const lines = ['phone_number,i'];
    for (let i = 0; i < 2500; i++) lines.push(`+1555${String(5550000 + (i % 2000)).padStart(7, '0')},${i}`);
    const file = csv('big.csv', `${lines.join('\n')}\n`);
    const progress: number[] = [];
    const summary = await importLeads(handle.db, { id: campaignId, allowDuplicates: false }, readLeadCsv(file), { now: 1, sourceFile: file, batchSize: 300, onProgress: (n) => progress.push(n) });
    expect(summary).toMatchObject({ read: 2500, accepted: 2000, duplicates: 500 });
    expect(progress.at(-1)).toBe(2500);
    expect(progress.length).toBeGreaterThan(5);
    const again = await load(file, { batchSize: 700 });
    expect(again).toMatchObject({ accepted: 0, unchanged: 2000, duplicates: 500 });
    expect(await leads()).toHaveLength(2000);
  });
});

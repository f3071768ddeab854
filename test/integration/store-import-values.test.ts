import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { syncHookSubscriptions } from '../../src/store/hook-outbox.js';
import { importLeads } from '../../src/leads/import.js';
import { readLeadCsv } from '../../src/leads/read-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openTestStore } from '../helpers/test-store.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';

// Values that a text protocol must escape (PostgreSQL's import goes by COPY's text format):
// each comes back from the store exactly as it was in the file, on both dialects.

let handle: DatabaseHandle;
let dir: string;
let campaignId: number;

beforeEach(async () => {
  // The file's path is part of every dedupe key and of source_file: awkward too.
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd import \\ ünï 📞 '));
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  const cfg = testCampaignConfig('values', { maxCallsInParallel: 2 });
  campaignId = (await upsertCampaign(handle.db, cfg, { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  await handle.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const AWKWARD = [
  'say "hi"',
  'tab\there',
  'line\nbreak',
  'carriage\r\nreturn',
  'back\\slash \\N \\. \\t',
  'emoji 📞 ünïcödé 中文',
  '',
  '\\',
  'end\\',
];

/** A CSV field, quoted as a spreadsheet would. */
const field = (v: string): string => `"${v.replaceAll('"', '""')}"`;

it('stores quotes, tabs, newlines, backslashes, emoji and empty fields as they were, and finds them again on re-import', async () => {
  const lines = ['phone_number,note,secondary_phone_number_1'];
  AWKWARD.forEach((note, i) => lines.push(`+1555555${String(100 + i).padStart(4, '0')},${field(note)},${i % 2 === 0 ? `+1555555${String(900 + i).padStart(4, '0')}` : ''}`));
  // Invalid rows keep their raw text as the lead's number.
  const badNumbers = ['not\ta\\number', 'x\ny 📞'];
  for (const bad of badNumbers) lines.push(`${field(bad)},${field('bad')},`);
  const file = path.join(dir, 'leads \\ 📞.csv');
  fs.writeFileSync(file, `${lines.join('\r\n')}\r\n`);

  // Invalid rows are final leads: the hook triggers queue one event each, with the raw text.
  await syncHookSubscriptions(handle.db, [{ url: 'https://hooks.example/final', events: ['lead.final'] }]);
  const run = () => importLeads(handle.db, { id: campaignId, allowDuplicates: false }, readLeadCsv(file), { now: 1000, sourceFile: file });
  const first = await run();
  expect(first).toMatchObject({ read: AWKWARD.length + 2, accepted: AWKWARD.length, invalid: 2 });

  const rows = await handle.db.selectFrom('leads').selectAll().where('campaign_id', '=', campaignId).orderBy('id').execute();
  // Ids follow the file's order (lines count the newlines inside quoted fields).
  const lineNumbers = rows.map((r) => r.source_line!);
  expect(lineNumbers).toEqual([...lineNumbers].sort((a, b) => a - b));
  expect(new Set(lineNumbers).size).toBe(rows.length);
  expect(rows.slice(0, AWKWARD.length).map((r) => (JSON.parse(r.variables_json) as { note: string }).note)).toEqual(AWKWARD);
  expect(rows.slice(AWKWARD.length).map((r) => r.phone_number)).toEqual(badNumbers);
  expect(rows.slice(AWKWARD.length).map((r) => r.dedupe_key)).toEqual(lineNumbers.slice(AWKWARD.length).map((line) => `invalid:${file}:${line}`));
  expect(new Set(rows.map((r) => r.source_file))).toEqual(new Set([file]));
  expect(rows.map((r) => r.state)).toEqual([...AWKWARD.map(() => 'pending'), 'invalid', 'invalid']);

  const contacts = await handle.db.selectFrom('lead_contacts').select(['lead_id', 'position', 'phone_number']).orderBy('lead_id').orderBy('position').execute();
  // Secondary numbers only (positions 1..): the primary is the lead's own phone_number.
  const expected = rows.slice(0, AWKWARD.length).flatMap((r, i) => (i % 2 === 0 ? [{ lead_id: r.id, position: 1, phone_number: `+1555555${String(900 + i).padStart(4, '0')}` }] : []));
  expect(contacts).toEqual(expected);

  const outbox = await handle.db.selectFrom('hook_outbox').select(['type', 'body']).orderBy('id').execute();
  expect(outbox.map((o) => [o.type, (JSON.parse(o.body ?? 'null') as { data: { lead: { phone_number: string } } }).data.lead.phone_number])).toEqual(badNumbers.map((n) => ['lead.final', n]));

  // The same file again: every key found, nothing added.
  expect(await run()).toMatchObject({ accepted: 0, unchanged: AWKWARD.length, updated: 0, invalid: 2 });
  const counts = await handle.db.selectFrom('lead_counts').select(['state', 'n']).where('campaign_id', '=', campaignId).orderBy('state').execute();
  expect(counts).toEqual([
    { state: 'invalid', n: 2 },
    { state: 'pending', n: AWKWARD.length },
  ]);
});

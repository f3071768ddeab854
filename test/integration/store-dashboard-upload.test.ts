// The dashboard's lead-file upload over real HTTP (the daemon's server and the dashboard's
// routes) on SQLite and (vitest.postgres.config.ts) PostgreSQL: a CSV and an .xlsx are
// imported as `campaignd leads import` imports them, the answer holds the import's summary,
// uploading the same file again adds nothing, the engine is woken; a request without a
// session, the CSRF token or the dashboard's origin, a body over the limit and files that
// are no lead file are refused with the reason and change nothing; the staged copy never
// outlives the request.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/dashboard/guard.js';
import { UPLOAD_LIMIT_BYTES, UPLOAD_PATH, uploadName } from '../../src/dashboard/upload.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Database } from '../../src/store/types.js';
import { ManualClock } from '../../src/time/clock.js';
import { startDashboardServer } from '../helpers/dashboard-server.js';
import { openTestStore, testDialect } from '../helpers/test-store.js';
import { campaignConfig, insertCampaign } from './status-fixture.js';

const TOKEN = 'dash-upload-51d0-DO-NOT-LOG';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

interface Setup {
  db: Kysely<Database>;
  base: string;
  cookie: string;
  csrf: string;
  staging: string;
  campaignId: number;
  wakes: () => number;
}

async function setup(): Promise<Setup> {
  const h: DatabaseHandle = await openTestStore();
  closers.push(() => h.close());
  await migrateToLatest(h.db, { clock: { now: () => 0 } });
  const campaignId = await insertCampaign(h.db, campaignConfig('spring', { defaultCountry: 'DE' }));
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-upload-test-'));
  closers.push(async () => fs.rmSync(staging, { recursive: true, force: true }));
  let wakes = 0;
  const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
  const server = await startDashboardServer({ db: h.db, clock, token: TOKEN, stagingDir: staging, onStateChanged: () => wakes++ });
  closers.push(() => server.close());
  const base = server.url;
  const login = await fetch(`${base}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  expect(cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
  const page = await (await fetch(base, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page)![1]!;
  return { db: h.db, base, cookie, csrf, staging, campaignId, wakes: () => wakes };
}

/** Sends a file as the page's script does; `headers` replace the page's. */
function upload(s: Setup, name: string, bytes: Buffer | string, headers: Record<string, string | undefined> = {}, campaign = 'spring'): Promise<Response> {
  const all: Record<string, string | undefined> = {
    cookie: s.cookie,
    origin: s.base,
    'x-csrf-token': s.csrf,
    'x-file-name': encodeURIComponent(name),
    'content-type': 'application/octet-stream',
    accept: 'application/json',
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return fetch(`${s.base}${UPLOAD_PATH}?campaign=${encodeURIComponent(campaign)}`, { method: 'POST', headers: sent, body: bytes });
}

const leadsOf = (s: Setup) => s.db.selectFrom('leads').select(['phone_number', 'state', 'source_file', 'dedupe_key']).where('campaign_id', '=', s.campaignId).orderBy('phone_number').execute();

const CSV = 'phone_number,first_name\n+4915100000001,Ada\n030 1234567,Bert\n+4915100000001,Ada again\nnot a number,Cleo\n';

describe(`dashboard lead upload (${testDialect})`, () => {
  it('imports a CSV as leads import does, shows its summary, wakes the engine; the same file again adds nothing', async () => {
    const s = await setup();
    const res = await upload(s, 'Spring leads.csv', CSV);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown> & { text: string; samples: { line: number; message: string }[] };
    expect(doc).toMatchObject({ campaign: 'spring', file: 'Spring leads.csv', read: 4, accepted: 2, duplicates: 1, invalid: 1, updated: 0, unchanged: 0 });
    // The text `leads import` prints, naming the file as uploaded.
    expect(doc.text).toContain('Imported Spring leads.csv into campaign "spring": 2 of 4 rows');
    expect(doc.text).toContain('Read as CSV: UTF-8, comma-separated');
    expect(doc.text).toMatch(/ {8}2 {2}accepted \(new leads\)/);
    expect(doc.text).toContain('First problem rows:\n  line 4: +4915100000001 duplicates line 2\n  line 5: not a number:');
    expect(doc.samples.map((x) => x.line)).toEqual([4, 5]);
    expect(s.wakes()).toBe(1);

    const stored = await leadsOf(s);
    // National numbers read in the campaign's default_country (DE), as the command reads them.
    expect(stored.map((l) => [l.phone_number, l.state])).toEqual([
      ['+4915100000001', 'pending'],
      ['+49301234567', 'pending'],
      ['not a number', 'invalid'],
    ]);
    expect(new Set(stored.map((l) => l.source_file))).toEqual(new Set(['dashboard-upload/Spring leads.csv']));
    const event = await s.db.selectFrom('events').select('data_json').where('kind', '=', 'leads-imported').executeTakeFirstOrThrow();
    expect(JSON.parse(event.data_json!)).toMatchObject({ file: 'dashboard-upload/Spring leads.csv', by: 'dashboard', accepted: 2 });

    const again = await upload(s, 'Spring leads.csv', CSV);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ read: 4, accepted: 0, unchanged: 2, duplicates: 1, invalid: 1 });
    expect(await leadsOf(s)).toEqual(stored);
    expect(fs.readdirSync(s.staging)).toEqual([]);
  });

  it('imports an .xlsx workbook, its columns recognised by their names', async () => {
    const s = await setup();
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Kontakte');
    sheet.addRow(['Telefon', 'Vorname']);
    sheet.addRow(['+4915100000007', 'Dora']);
    sheet.addRow([4915100000008, 'Emil']);
    const bytes = Buffer.from(await wb.xlsx.writeBuffer());
    const res = await upload(s, 'kontakte.xlsx', bytes);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { accepted: number; text: string; format: unknown };
    expect(doc.accepted).toBe(2);
    expect(doc.format).toEqual({ type: 'xlsx', sheet: 'Kontakte' });
    expect(doc.text).toContain('Read as an Excel workbook, sheet "Kontakte"');
    expect(doc.text).toContain('phone_number ← "Telefon"');
    expect((await leadsOf(s)).map((l) => l.phone_number)).toEqual(['+4915100000007', '+4915100000008']);
    // The same workbook again: nothing new.
    expect(await (await upload(s, 'kontakte.xlsx', bytes)).json()).toMatchObject({ accepted: 0, unchanged: 2 });
    expect(fs.readdirSync(s.staging)).toEqual([]);
  });

  it('offers the upload on the page, for each campaign', async () => {
    const s = await setup();
    const page = await (await fetch(s.base, { headers: { cookie: s.cookie } })).text();
    expect(page).toContain(`<form id="upload" method="post" action="${UPLOAD_PATH}"`);
    expect(page).toContain(`data-limit="${UPLOAD_LIMIT_BYTES}"`);
    expect(page).toContain('<select id="upload-campaign" name="campaign"><option>spring</option></select>');
  });

  it('refuses an upload without a session, the CSRF token or the dashboard origin, and stores nothing', async () => {
    const s = await setup();
    const cases: [string, Record<string, string | undefined>, number, RegExp][] = [
      ['no session', { cookie: undefined }, 401, /token is required/],
      ['no CSRF token', { 'x-csrf-token': undefined }, 403, /CSRF/],
      ['a wrong CSRF token', { 'x-csrf-token': 'x'.repeat(43) }, 403, /CSRF/],
      ['another origin', { origin: 'http://evil.example' }, 403, /cross-origin request from http:\/\/evil\.example/],
      ['neither Origin nor Referer', { origin: undefined }, 403, /no Origin or Referer/],
      ['an opaque origin', { origin: 'null' }, 403, /opaque Origin/],
      ['a plain multipart form post', { 'content-type': 'multipart/form-data; boundary=x' }, 415, /page's script/],
    ];
    for (const [what, headers, status, message] of cases) {
      const res = await upload(s, 'leads.csv', CSV, headers);
      expect(res.status, what).toBe(status);
      expect(((await res.json()) as { error: string }).error, what).toMatch(message);
    }
    // A Referer of the dashboard's own origin stands in for a missing Origin, as for the other actions.
    expect((await upload(s, 'leads.csv', CSV, { origin: undefined, referer: `${s.base}/` })).status).toBe(200);
    expect((await leadsOf(s)).length).toBe(3);
    expect(s.wakes()).toBe(1);
  });

  it('refuses a body over the limit with the reason, and stores nothing', async () => {
    const s = await setup();
    const big = Buffer.alloc(UPLOAD_LIMIT_BYTES + 1, 'a');
    const res = await upload(s, 'huge.csv', big);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe(
      'the file is larger than 10 MB, the most the dashboard takes: split it, or import it on the daemon\'s host with "campaignd leads import FILE --campaign NAME"',
    );
    // Exactly the limit is taken (and read as the lead file it is not).
    const atLimit = await upload(s, 'limit.csv', Buffer.alloc(UPLOAD_LIMIT_BYTES, 'a'));
    expect(atLimit.status).toBe(422);
    expect(await leadsOf(s)).toEqual([]);
    expect(s.wakes()).toBe(0);
  });

  it('answers a file that is no lead file with the import\'s own words, never a 500; nothing stored, nothing left behind', async () => {
    const s = await setup();
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
    const cases: [string, Buffer | string, string][] = [
      ['binary.csv', random, 'binary.csv: the file is not readable text'],
      ['fake.xlsx', 'phone_number\n+4915100000001\n', 'fake.xlsx: the file is named .xlsx but is not an Excel workbook'],
      ['broken.xlsx', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), random]), 'broken.xlsx: not a readable .xlsx workbook'],
      ['old.xls', Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0]), random]), 'old.xls: this is an old Excel .xls workbook'],
      ['empty.csv', '', 'empty.csv: the file is empty'],
      ['no-phone.csv', 'name,city\nAda,Berlin\n', 'no-phone.csv: no phone number column in the header row'],
      ['photo.png', Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), random]), 'photo.png: the file is not readable text'],
    ];
    for (const [name, bytes, message] of cases) {
      const res = await upload(s, name, bytes);
      expect(res.status, name).toBe(422);
      const { error } = (await res.json()) as { error: string };
      expect(error.startsWith(message), `${name}: ${error}`).toBe(true);
      // The staged copy's path is never shown: the operator's file name is.
      expect(error, name).not.toContain(s.staging);
    }
    expect(await leadsOf(s)).toEqual([]);
    expect(s.wakes()).toBe(0);
    expect(fs.readdirSync(s.staging)).toEqual([]);
  });

  it('refuses an unknown campaign and an upload without a file name', async () => {
    const s = await setup();
    const unknown = await upload(s, 'leads.csv', CSV, {}, 'nope');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'no campaign named "nope"' });
    const nameless = await upload(s, 'leads.csv', CSV, { 'x-file-name': undefined });
    expect(nameless.status).toBe(400);
    expect(((await nameless.json()) as { error: string }).error).toMatch(/no file name/);
    expect(await leadsOf(s)).toEqual([]);
  });
});

describe('uploadName', () => {
  it('keeps the last path part, without control characters', () => {
    expect(uploadName('C:\\Users\\ada\\Leads März.xlsx')).toBe('Leads März.xlsx');
    expect(uploadName('../../etc/passwd')).toBe('passwd');
    expect(uploadName('a\u0000b\nc.csv')).toBe('abc.csv');
    expect(uploadName('..')).toBe('..');
    expect(uploadName('dir/')).toBe('');
  });
});

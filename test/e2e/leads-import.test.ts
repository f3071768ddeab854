import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import ExcelJS from 'exceljs';
import { openDatabase } from '../../src/store/database.js';
import { BUILD_CHECKED_ENV } from '../helpers/processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/campaignd.js');

let dir: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function campaignd(args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...BUILD_CHECKED_ENV };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-e2e-leads-'));
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(
    path.join(dir, 'campaignd.yaml'),
    ['api:', '  base_url: http://127.0.0.1:9', 'database: ./data/campaignd.db', 'campaigns_dir: ./campaigns', 'suppression_file: ./dnc.txt', ''].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'dnc.txt'), '# do not call\n+15555550104\n');
  fs.writeFileSync(
    path.join(dir, 'campaigns', 'spring.yaml'),
    [
      'name: spring',
      'assistant_id: 1',
      'timezone: Europe/Berlin',
      'allowed_days: [monday, tuesday, wednesday, thursday, friday]',
      'allowed_hours_start_time: "09:00:00"',
      'allowed_hours_end_time: "18:00:00"',
      'max_calls_in_parallel: 2',
      'status: paused',
      'default_country: DE',
      'leads:',
      '  file: ../leads.csv',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(dir, 'leads.csv'),
    '\uFEFFphone_number,first_name,secondary_phone_number_1\r\n+15555550100,Ada,030 1234567\r\n030 7654321,Ben,\r\n"not, a number",Cleo,\r\n+15555550100,Ada twice,\r\n+15555550104,Dan,\r\n',
  );
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('campaignd leads import', () => {
  it('imports a CSV, prints the summary, and stores leads in a private database file', async () => {
    const run = await campaignd(['leads', 'import', 'leads.csv', '--campaign', 'spring', '--config', 'campaignd.yaml']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Imported leads.csv into campaign "spring": 2 of 5 rows');
    expect(run.stdout).toMatch(/ 2 {2}accepted \(new leads\)/);
    expect(run.stdout).toMatch(/ 1 {2}duplicates/);
    expect(run.stdout).toMatch(/ 1 {2}suppressed/);
    expect(run.stdout).toMatch(/ 1 {2}invalid\n +1 {2}not a phone number/);
    expect(run.stdout).toContain('line 4: not, a number: not a phone number');

    const file = path.join(dir, 'data', 'campaignd.db');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const h = openDatabase(file, { readonly: true });
    try {
      const campaign = await h.db.selectFrom('campaigns').selectAll().executeTakeFirstOrThrow();
      expect(campaign).toMatchObject({ name: 'spring', state: 'paused', timezone: 'Europe/Berlin', max_calls_in_parallel: 2 });
      const leads = await h.db.selectFrom('leads').select(['phone_number', 'state']).orderBy('id').execute();
      expect(leads).toEqual([
        { phone_number: '+15555550100', state: 'pending' },
        { phone_number: '+49307654321', state: 'pending' },
        { phone_number: 'not, a number', state: 'invalid' },
        { phone_number: '+15555550104', state: 'suppressed' },
      ]);
      const contacts = await h.db
        .selectFrom('lead_contacts')
        .innerJoin('leads', 'leads.id', 'lead_contacts.lead_id')
        .select(['leads.phone_number as lead', 'lead_contacts.position', 'lead_contacts.phone_number'])
        .orderBy('lead_contacts.lead_id')
        .orderBy('lead_contacts.position')
        .execute();
      // The secondary numbers only: the primary is the lead's own phone_number.
      expect(contacts[0]).toEqual({ lead: '+15555550100', position: 1, phone_number: '+49301234567' });
      expect(contacts.every((c) => c.position >= 1)).toBe(true);
      const event = await h.db.selectFrom('events').select(['kind']).executeTakeFirstOrThrow();
      expect(event.kind).toBe('leads-imported');
    } finally {
      await h.close();
    }

    const again = await campaignd(['leads', 'import', 'leads.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ campaign: 'spring', read: 5, accepted: 0, unchanged: 3, duplicates: 1, invalid: 1, suppressed: 0 });
  });

  it('fails clearly for an unknown campaign, a missing file, and bad usage', async () => {
    const unknown = await campaignd(['leads', 'import', 'leads.csv', '--campaign', 'autumn', '--config', 'campaignd.yaml']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown campaign "autumn"; known: spring');

    const missing = await campaignd(['leads', 'import', 'nope.csv', '--campaign', 'spring', '--config', 'campaignd.yaml']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('lead file nope.csv does not exist');

    const usage = await campaignd(['leads', 'import', 'leads.csv', '--config', 'campaignd.yaml']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--campaign NAME is required');

    const noHeader = path.join(dir, 'bad.csv');
    fs.writeFileSync(noHeader, 'number,name\n+15555550100,a\n');
    const bad = await campaignd(['leads', 'import', 'bad.csv', '--campaign', 'spring', '--config', 'campaignd.yaml']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('no phone number column in the header row (found: "number", "name"): name it, e.g. --map "phone_number=number"');

    const badMap = await campaignd(['leads', 'import', 'leads.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--map', 'phone=Phone']);
    expect(badMap.code).toBe(2);
    expect(badMap.stderr).toContain('--map: unknown field "phone"');

    const help = await campaignd(['leads', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: campaignd leads import FILE --campaign NAME');
  });

  it('previews a semicolon Windows-1252 export with --dry-run and writes nothing, then imports it; a later dry run leaves the database unchanged', async () => {
    fs.writeFileSync(
      path.join(dir, 'kunden.csv'),
      Buffer.from('Telefon;Vorname;Zeitzone\r\n030 1234567;Jürgen;Europe/Berlin\r\n+15555550104;Dörte;\r\nkeine;Ömer;\r\n', 'latin1'),
    );
    const preview = await campaignd(['leads', 'import', 'kunden.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--dry-run']);
    expect(preview.stderr).toBe('');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain('Dry run, nothing written: kunden.csv into campaign "spring" would import 1 of 3 rows');
    expect(preview.stdout).toContain('Read as CSV: Windows-1252, semicolon-separated');
    expect(preview.stdout).toContain('Columns: phone_number ← "Telefon" (recognised), timezone ← "Zeitzone" (recognised)');
    expect(preview.stdout).toMatch(/ 1 {2}accepted \(new leads\)/);
    expect(preview.stdout).toMatch(/ 1 {2}suppressed/);
    expect(preview.stdout).toContain('line 4: keine: not a phone number');
    expect(preview.stdout).toContain('line 2: +49301234567, timezone Europe/Berlin, variables {"Vorname":"Jürgen"}');
    // Nothing written: not even the database file.
    expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);

    const run = await campaignd(['leads', 'import', 'kunden.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ dryRun: false, accepted: 1, suppressed: 1, invalid: 1, format: { type: 'csv', encoding: 'windows-1252', delimiter: ';' } });

    const dbFile = path.join(dir, 'data', 'campaignd.db');
    // The database file and its write-ahead log byte for byte. A reader of a WAL database
    // (status does the same) may leave an empty -wal file behind: empty and absent are one.
    const snapshot = (): string[] =>
      ['', '-wal'].map((suffix) => {
        const data = fs.existsSync(dbFile + suffix) ? fs.readFileSync(dbFile + suffix) : Buffer.alloc(0);
        return data.length === 0 ? 'empty' : createHash('sha256').update(data).digest('hex');
      });
    const before = snapshot();
    fs.writeFileSync(path.join(dir, 'kunden.csv'), Buffer.from('Telefon;Vorname;Zeitzone\r\n030 1234567;Jürgen Neu;Europe/Berlin\r\n+15555550199;Neu;\r\n', 'latin1'));
    const again = await campaignd(['leads', 'import', 'kunden.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--dry-run', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ dryRun: true, read: 2, accepted: 1, updated: 1, preview: [{ line: 2, ok: true }, { line: 3, ok: true }] });
    expect(snapshot()).toEqual(before);
    const h = openDatabase(dbFile, { readonly: true });
    try {
      const leads = await h.db.selectFrom('leads').select(['phone_number', 'variables_json']).orderBy('id').execute();
      expect(leads.map((l) => l.phone_number)).toEqual(['+49301234567', '+15555550104', 'keine']);
      expect(leads[0]?.variables_json).toBe('{"Vorname":"Jürgen"}');
      expect(await h.db.selectFrom('events').select('kind').execute()).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('shows a column taken for the country under Columns only, not also under Variables', async () => {
    fs.writeFileSync(path.join(dir, 'kunden.csv'), 'Telefon,Vorname,Land\n030 1234567,Jürgen,DE\n(415) 555-0101,Ada,US\n');
    const preview = await campaignd(['leads', 'import', 'kunden.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--dry-run']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('Columns: phone_number ← "Telefon" (recognised), country ← "Land" (recognised)\nVariables: Vorname\n');
    expect(preview.stdout).toContain('line 3: +14155550101, variables {"Vorname":"Ada"}');
  });

  it('imports the sheet named by --sheet of a real .xlsx, with --map and lead_columns, numbers stored as numbers kept exact', async () => {
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Info').addRow(['exported from the CRM']);
    const sheet = wb.addWorksheet('Kontakte');
    sheet.addRow(['Nummer', 'Handy', 'Vorname']);
    sheet.addRow([4915102000001, 15102000002, 'Jürgen']);
    sheet.addRow([30123456, null, 'Ada']);
    await wb.xlsx.writeFile(path.join(dir, 'kontakte.xlsx'));
    // The campaign names the variable; --map names the numbers for this one import.
    fs.appendFileSync(path.join(dir, 'campaigns', 'spring.yaml'), 'lead_columns:\n  variables: { first_name: Vorname }\n');

    const run = await campaignd([
      'leads', 'import', 'kontakte.xlsx', '--campaign', 'spring', '--config', 'campaignd.yaml', '--sheet', 'Kontakte', '--map', 'phone_number=Nummer,secondary_phone_numbers=Handy',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Read as an Excel workbook, sheet "Kontakte"');
    expect(run.stdout).toContain('Columns: phone_number ← "Nummer" (mapped), secondary_phone_numbers ← "Handy"');
    expect(run.stdout).toContain('Variables: first_name ← "Vorname"');
    expect(run.stdout).toMatch(/ 2 {2}accepted/);
    const h = openDatabase(path.join(dir, 'data', 'campaignd.db'), { readonly: true });
    try {
      const leads = await h.db.selectFrom('leads').select(['phone_number', 'variables_json', 'source_line']).orderBy('id').execute();
      expect(leads).toEqual([
        { phone_number: '+4915102000001', variables_json: '{"first_name":"Jürgen"}', source_line: 2 },
        { phone_number: '+4930123456', variables_json: '{"first_name":"Ada"}', source_line: 3 },
      ]);
      const contacts = await h.db.selectFrom('lead_contacts').select('phone_number').where('position', '=', 1).execute();
      expect(contacts).toEqual([{ phone_number: '+4915102000002' }]);
    } finally {
      await h.close();
    }

    const noSheet = await campaignd(['leads', 'import', 'kontakte.xlsx', '--campaign', 'spring', '--config', 'campaignd.yaml', '--sheet', 'Leads']);
    expect(noSheet.code).toBe(1);
    expect(noSheet.stderr).toContain('no sheet "Leads" in the workbook (sheets: "Info", "Kontakte"): give one of them to --sheet');
  });
});

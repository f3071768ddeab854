import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
    expect(run.stdout).toContain('Imported leads.csv into campaign "spring": 5 rows');
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
      const contacts = await h.db.selectFrom('lead_contacts').select(['position', 'phone_number']).orderBy('lead_id').orderBy('position').execute();
      expect(contacts.slice(0, 2)).toEqual([
        { position: 0, phone_number: '+15555550100' },
        { position: 1, phone_number: '+49301234567' },
      ]);
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
    expect(bad.stderr).toContain('no "phone_number" column in the header row (found: number, name)');

    const help = await campaignd(['leads', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: campaignd leads import FILE --campaign NAME');
  });
});

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BIN, BUILD_CHECKED_ENV } from '../helpers/processes.js';

// National numbers typed for `explain` and `suppress`, through the bin: read in the
// default_country of the campaigns (each tried when they differ; several readings are
// refused with the --country that picks each), and `suppress add` with some bad numbers
// adds the good ones and reports each bad one on its own line (exit 1).

let dir: string;

function campaignFile(name: string, country: string): void {
  fs.writeFileSync(
    path.join(dir, 'campaigns', `${name}.yaml`),
    [`name: ${name}`, 'assistant_id: 1', 'timezone: UTC', 'allowed_days: [monday]', 'allowed_hours_start_time: "09:00:00"', 'allowed_hours_end_time: "18:00:00"', 'max_calls_in_parallel: 1', 'status: paused', `default_country: ${country}`, `leads: { file: ../${name}.csv }`, ''].join('\n'),
  );
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-e2e-country-'));
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), 'api:\n  base_url: http://127.0.0.1:9\ndatabase: ./campaignd.db\ncampaigns_dir: ./campaigns\n');
  campaignFile('spring', 'US');
  fs.writeFileSync(path.join(dir, 'spring.csv'), 'phone_number,name\n(415) 555-0101,Ada\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function campaignd(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...BUILD_CHECKED_ENV };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, '--config', 'campaignd.yaml'], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err && typeof err.code === 'number' ? err.code : err ? null : 0, stdout, stderr });
    });
  });
}

it("explain reads a national number in the campaign's default_country", async () => {
  expect((await campaignd('leads', 'import', 'spring.csv', '--campaign', 'spring')).code).toBe(0);
  const explained = await campaignd('explain', '(415) 555-0101');
  expect(explained.stderr).toBe('');
  expect(explained.code).toBe(0);
  expect(explained.stdout).toContain('+14155550101 in campaign "spring"');
  // --country still wins.
  const elsewhere = await campaignd('explain', '(415) 555-0101', '--country', 'DE');
  expect(elsewhere.stdout).toContain('+494155550101: no lead with this number in any campaign');
});

it('explain and suppress name the --country to pass when the campaigns\' countries read a number differently, or when no campaign has one', async () => {
  const none = await campaignd('suppress', 'add', '(415) 555-0101');
  expect(none.code).toBe(1);
  expect(none.stderr).toBe(
    '"(415) 555-0101" is not a phone number campaignd can read: national number and no campaign in the store has a default_country: pass --country CC (e.g. --country US) or write it with + and the country code\n',
  );

  campaignFile('herbst', 'DE');
  fs.writeFileSync(path.join(dir, 'herbst.csv'), 'phone_number\n030 1234567\n');
  expect((await campaignd('leads', 'import', 'spring.csv', '--campaign', 'spring')).code).toBe(0);
  expect((await campaignd('leads', 'import', 'herbst.csv', '--campaign', 'herbst')).code).toBe(0);
  const both = await campaignd('explain', '(415) 555-0101');
  expect(both.code).toBe(2);
  expect(both.stderr).toContain(
    "national number that reads differently in the campaigns' default_country DE, US: +494155550101 (--country DE), +14155550101 (--country US); pass --country to say which",
  );
  // A reading only one country assigns is the number meant: 030 is Berlin, not a US area code.
  const berlin = await campaignd('explain', '030 1234567');
  expect(berlin.code).toBe(0);
  expect(berlin.stdout).toContain('+49301234567 in campaign "herbst"');
  const us = await campaignd('explain', '(415) 555-0101', '--country', 'US');
  expect(us.stdout).toContain('+14155550101 in campaign "spring"');
});

it('suppress add lists the good numbers of a batch, reports each bad one on its own line, and exits 1', async () => {
  expect((await campaignd('leads', 'import', 'spring.csv', '--campaign', 'spring')).code).toBe(0);
  const added = await campaignd('suppress', 'add', '(415) 555-0101', '12345', '+15555550100', 'nope');
  expect(added.code).toBe(1);
  expect(added.stderr.split('\n')).toEqual([
    `"12345" is not a phone number campaignd can read: too short for US (read in the campaigns' default_country US): pass --country CC for another country, or write it with + and the country code`,
    '"nope" is not a phone number campaignd can read: not a phone number',
    '',
  ]);
  expect(added.stdout).toBe('suppression list: 2 added, 0 already listed, 2 invalid numbers skipped; 1 waiting lead suppressed\n');
  const listed = await campaignd('suppress', 'list', '--json');
  expect((JSON.parse(listed.stdout) as { numbers: { phone_number: string }[] }).numbers.map((n) => n.phone_number).sort()).toEqual(['+14155550101', '+15555550100']);

  const removed = await campaignd('suppress', 'remove', '(415) 555-0101', 'nope', '--json');
  expect(removed.code).toBe(1);
  expect(JSON.parse(removed.stdout)).toMatchObject({ removed: ['+14155550101'], invalid: [{ text: 'nope', reason: 'not a phone number' }] });
});

// Every command on the configured store, the same test on both dialects
// (docs/design.md §10): on the PostgreSQL run the config names a postgres:// URL without its
// password and the commands get it from PGPASSWORD, as an operator sets it up. The
// password never appears in what a command prints.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { campaignCommand } from '../../src/cli/campaign.js';
import { explainCommand } from '../../src/cli/explain.js';
import { forgetCommand } from '../../src/cli/forget.js';
import type { CliIo } from '../../src/cli/io.js';
import { leadsCommand } from '../../src/cli/leads.js';
import { resultsCommand } from '../../src/cli/results.js';
import { statusCommand } from '../../src/cli/status.js';
import { suppressCommand } from '../../src/cli/suppress.js';
import { parseDaemonFile } from '../../src/config/daemon.js';
import { testDatabaseTarget, testDialect, type TestDatabaseTarget } from '../helpers/test-store.js';
import { Capture } from '../helpers/capture.js';

let dir: string;
let target: TestDatabaseTarget;
let printed: string[];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-commands-'));
  target = await testDatabaseTarget(dir);
  printed = [];
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${target.database}\ncampaigns_dir: ./campaigns\n`);
  fs.writeFileSync(
    path.join(dir, 'campaigns', 'spring.yaml'),
    [
      'name: spring',
      'assistant_id: 1',
      'timezone: UTC',
      'allowed_days: [monday, tuesday, wednesday, thursday, friday, saturday, sunday]',
      'allowed_hours_start_time: "00:00:00"',
      'allowed_hours_end_time: "00:00:00"',
      'max_calls_in_parallel: 2',
      'max_retries: 1',
      'retry_interval: 60',
      'default_country: US',
      'leads:',
      '  file: ../leads.csv',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'leads.csv'), 'phone_number,first_name\n+12025550101,Ada\n+12025550102,Ben\nnot a number,Cid\n');
});

afterEach(async () => {
  await target.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(command: (args: string[], io: CliIo) => Promise<number>, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = { stdout, stderr, env: { ...target.env }, cwd: dir };
  const code = await command([...args, '--config', path.join(dir, 'campaignd.yaml')], io);
  printed.push(stdout.text, stderr.text);
  return { code, out: stdout.text, err: stderr.text };
}

describe(`commands on the configured store (${testDialect})`, () => {
  it('leads import, campaign pause, status, explain, results, suppress and forget all work on it', async () => {
    const dry = await run(leadsCommand, ['import', 'leads.csv', '--campaign', 'spring', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const imported = await run(leadsCommand, ['import', 'leads.csv', '--campaign', 'spring', '--json']);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ campaign: 'spring' });
    // Again: nothing twice.
    expect((await run(leadsCommand, ['import', 'leads.csv', '--campaign', 'spring'])).code).toBe(0);

    expect((await run(campaignCommand, ['pause', 'spring'])).out).toContain('campaign "spring": running → paused');

    const status = await run(statusCommand, ['--json']);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.out) as { campaigns: { name: string; state: string; leads: Record<string, number> }[] };
    expect(report.campaigns).toHaveLength(1);
    expect(report.campaigns[0]).toMatchObject({ name: 'spring', state: 'paused' });

    const explained = await run(explainCommand, ['+12025550101', '--json']);
    expect(explained.code).toBe(0);
    expect(explained.out).toContain('+12025550101');

    const results = await run(resultsCommand, ['spring', '--format', 'jsonl']);
    expect(results.code).toBe(0);
    expect(results.out.trim().split('\n')).toHaveLength(3);

    expect((await run(suppressCommand, ['add', '+12025550102'])).code).toBe(0);
    expect(JSON.parse((await run(suppressCommand, ['list', '--json'])).out).numbers).toHaveLength(1);

    const forgot = await run(forgetCommand, ['+12025550101', '--json']);
    expect(forgot.code).toBe(0);
    expect(JSON.parse(forgot.out)).toMatchObject({ phone_number: '+12025550101', leads: 1, file_rewritten: testDialect === 'sqlite' });
    const after = await run(explainCommand, ['+12025550101', '--json']);
    expect(after.out).not.toContain('Ada');

    if (target.env.PGPASSWORD) for (const text of printed) expect(text).not.toContain(target.env.PGPASSWORD);
  });

  it('a store that does not exist yet: status says so (on PostgreSQL, a database that was never created)', async () => {
    await target.drop();
    const status = await run(statusCommand, []).catch((err: Error) => err);
    expect(String(status)).toMatch(/no database at|holds no campaignd data yet/);
    if (target.env.PGPASSWORD) expect(String(status)).not.toContain(target.env.PGPASSWORD);
  });
});

describe('the database setting', () => {
  it('keeps a PostgreSQL URL a URL (file and env), refuses a password in the file, resolves the password file', () => {
    const parse = (text: string, env: Record<string, string> = {}) => parseDaemonFile('/etc/campaignd/campaignd.yaml', `api:\n  base_url: http://x\n${text}`, env, '/home/op');
    const url = parse('database: postgres://campaignd@db.example:5432/campaignd\ndatabase_password_file: ./pgpass\n');
    expect(url.problems).toEqual([]);
    expect(url.daemon).toMatchObject({ database: 'postgres://campaignd@db.example:5432/campaignd', databasePasswordFile: '/etc/campaignd/pgpass' });
    expect(parse('database: ./x.db\n', { CAMPAIGND_DATABASE: 'postgresql://a@h/db' }).daemon?.database).toBe('postgresql://a@h/db');
    expect(parse('database: ./x.db\n').daemon?.database).toBe('/etc/campaignd/x.db');
    const secret = parse('database: postgres://campaignd:hunter2@db.example/campaignd\n');
    expect(secret.problems.map((p) => p.message)).toEqual(['the URL holds a password: a password never goes in the config file']);
    expect(JSON.stringify(secret.problems)).not.toContain('hunter2');
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { systemClock } from '../../src/time/clock.js';
import { BUILD_CHECKED_ENV } from '../helpers/processes.js';

const root = path.resolve(import.meta.dirname, '../..');
const fixtures = path.join(root, 'test/fixtures/config');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The real CLI in a child process, with a clean environment so that the host's CAMPAIGND_* never leak in.
function validate(args: string[], env: Record<string, string> = {}, cwd = root): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'bin/campaignd.js'), 'validate', ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...BUILD_CHECKED_ENV, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('campaignd validate (offline)', () => {
  it('exits 0 for a good config and says which campaigns are ok', async () => {
    const run = await validate(['--config', path.join(fixtures, 'good/campaignd.yaml')], { CAMPAIGND_WEBHOOK_SECRET: 'w' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('campaignd validate: 0 errors, 0 warnings; 2 campaigns ok (alpha, beta); offline\n');
  });

  it('exits 0 for the shipped example config found by default, listing its lead-row warnings', async () => {
    const run = await validate([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('config/leads/demo.csv:31 warning phone_number: "+1555" cannot be called');
    expect(run.stdout).toMatch(/0 errors, \d+ warnings; 2 campaigns ok \(demo, follow-up\)/);
  });

  it('exits 1 and names file, line and field of every problem, keeping the good campaigns', async () => {
    const run = await validate(['--config', 'test/fixtures/config/mixed/campaignd.yaml']);
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain(
      'test/fixtures/config/mixed/campaigns/b-broken.yaml:2:24 allowed_days[1]: "funday" is not a day name (did you mean "sunday"?) — use one of monday, tuesday, wednesday, thursday, friday, saturday, sunday',
    );
    expect(lines.some((l) => l.startsWith('test/fixtures/config/mixed/campaigns/e-no-leads-file.yaml:6:9 leads.file:'))).toBe(true);
    expect(lines.some((l) => l.startsWith('test/fixtures/config/mixed/campaigns/f-syntax.yaml:3:1:'))).toBe(true);
    expect(lines.some((l) => l.startsWith('test/fixtures/config/mixed/leads/good.csv:3 warning phone_number:'))).toBe(true);
    expect(lines.some((l) => l.startsWith('test/fixtures/config/mixed/leads/good.csv:4 warning phone_number: same number as line 2'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^campaignd validate: 5 errors, \d+ warnings; 2 campaigns ok \(a-good, g-big\); 5 broken \(b-broken, shared, shared, e-no-leads-file, f-syntax\); offline$/);
  });

  it('never prints a token written into the daemon file', async () => {
    const run = await validate(['--config', path.join(fixtures, 'bad-daemon/campaignd.yaml')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('api.token: the API token must not be written in the config file');
    expect(run.stdout + run.stderr).not.toContain('secret-token-never-shown');
  });

  it('exits 2 with the line of a YAML syntax error when the daemon file does not parse', async () => {
    const run = await validate(['--config', path.join(fixtures, 'unreadable/campaignd.yaml')]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('test/fixtures/config/unreadable/campaignd.yaml:3:1: All mapping items must start at the same column');
    expect(run.stderr).toContain('the config cannot be read');
  });

  it('exits 2 when the daemon file does not exist, also found through CAMPAIGND_CONFIG', async () => {
    const run = await validate([], { CAMPAIGND_CONFIG: 'nowhere/campaignd.yaml' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('nowhere/campaignd.yaml: cannot read the config file: no such file or folder');
  });

  it('prints one JSON document with --json', async () => {
    const run = await validate(['--json', '--config', path.join(fixtures, 'mixed/campaignd.yaml')]);
    expect(run.code).toBe(1);
    const doc = JSON.parse(run.stdout) as { ok: boolean; errors: number; campaigns: { name: string; ok: boolean }[]; problems: { file: string; line?: number; field?: string; severity: string }[] };
    expect(doc.ok).toBe(false);
    expect(doc.errors).toBe(5);
    expect(doc.campaigns.filter((c) => c.ok).map((c) => c.name)).toEqual(['a-good', 'g-big']);
    expect(doc.problems).toContainEqual(expect.objectContaining({ field: 'allowed_days[1]', line: 2, severity: 'error' }));
  });

  it('answers --help with exit 0 and a bad option with exit 2', async () => {
    const help = await validate(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: campaignd validate');
    const bad = await validate(['--frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--frobnicate');
  });
});

describe('campaignd validate --online (against the simulator)', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    // good/token holds "test-token-value": the simulator's only user.
    sim = await startSimulator({ clock: systemClock, tokens: ['test-token-value'] });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('accepts the token and flags a campaign whose assistant is not outbound', async () => {
    const run = await validate(['--online', '--config', path.join(fixtures, 'good/campaignd.yaml')], { CAMPAIGND_API_BASE_URL: sim.url, CAMPAIGND_WEBHOOK_SECRET: 'w' });
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    // The seeded user has outbound assistant 1 (alpha uses it) and inbound assistant 2 (beta).
    expect(lines[0]).toMatch(/^test\/fixtures\/config\/good\/campaigns\/beta\.json:3:\d+ assistant_id: assistant 2 is not one of this account's outbound assistants — use the id of an outbound assistant: 1/);
    expect(lines.at(-1)).toBe('campaignd validate: 1 error, 0 warnings; 1 campaign ok (alpha); 1 broken (beta)');
  });

  it('reports a rejected token without printing it', async () => {
    const run = await validate(['--online', '--config', path.join(root, 'config/campaignd.yaml')], {
      CAMPAIGND_API_BASE_URL: sim.url,
      CAMPAIGND_API_TOKEN: 'wrong-token-123',
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('CAMPAIGND_API_TOKEN: the service rejected the API token');
    expect(run.stdout + run.stderr).not.toContain('wrong-token-123');
  });

  it('reports a missing token as an error when online', async () => {
    const run = await validate(['--online', '--config', path.join(root, 'config/campaignd.yaml')], { CAMPAIGND_API_BASE_URL: sim.url });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('config/campaignd.yaml: no API token');
  });

  it('reports a service it cannot reach', async () => {
    const run = await validate(['--online', '--config', path.join(root, 'config/campaignd.yaml')], { CAMPAIGND_API_BASE_URL: 'http://127.0.0.1:1', CAMPAIGND_API_TOKEN: 't' });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('api.base_url: cannot reach the service at http://127.0.0.1:1');
  });
});

import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigUnreadableError, daemonConfigHasErrors, loadConfig } from '../../src/config/load.js';
import type { ConfigProblem, LoadedConfig } from '../../src/config/types.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/config');
const load = (dir: string, env: Record<string, string | undefined> = {}): Promise<LoadedConfig> => loadConfig(path.join(fixtures, dir, 'campaignd.yaml'), env);

function problemOf(problems: ConfigProblem[], file: string, field: string): ConfigProblem {
  const found = problems.find((p) => p.file.endsWith(file) && p.field === field);
  if (!found) throw new Error(`no problem for ${file} ${field}: ${JSON.stringify(problems)}`);
  return found;
}

describe('loadConfig: a good config', () => {
  it('loads YAML and JSON campaigns, sorted, with absolute paths and defaults', async () => {
    const loaded = await load('good');
    expect(loaded.problems).toEqual([]);
    expect(loaded.brokenCampaigns).toEqual([]);
    expect(loaded.campaigns.map((c) => c.name)).toEqual(['alpha', 'beta']);
    expect(loaded.campaigns[0]?.leads.file).toBe(path.join(fixtures, 'good/leads/alpha.csv'));
    const d = loaded.daemon;
    expect(d).toEqual({
      file: path.join(fixtures, 'good/campaignd.yaml'),
      api: { baseUrl: 'https://service.example', tokenFile: path.join(fixtures, 'good/token'), rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 }, serverTimezone: 'UTC' },
      database: path.join(fixtures, 'good/data/test.db'),
      campaignsDir: path.join(fixtures, 'good/campaigns'),
      http: { host: '127.0.0.1', port: 9464 },
      webhook: { secretEnv: 'CAMPAIGND_WEBHOOK_SECRET', register: false },
      suppressionFile: path.join(fixtures, 'good/dnc.txt'),
      unknownAttemptSettleSeconds: 180,
      log: { level: 'info' },
      ha: { leaseSeconds: 10 },
      hooks: [],
      results: { keepTranscripts: true, retentionDays: null },
    });
    expect(daemonConfigHasErrors(loaded)).toBe(false);
  });
});

describe('loadConfig: broken campaigns never hide good ones', () => {
  it('keeps the good campaigns and lists the broken ones', async () => {
    const loaded = await load('mixed');
    expect(loaded.campaigns.map((c) => c.name)).toEqual(['a-good', 'g-big']);
    expect(loaded.brokenCampaigns.map((b) => path.basename(b.file))).toEqual(['b-broken.yaml', 'c-dup-one.yaml', 'd-dup-two.yml', 'e-no-leads-file.yaml', 'f-syntax.yaml']);
    expect(daemonConfigHasErrors(loaded)).toBe(false);
  });

  it('reports a duplicate name on both files, at the name line', async () => {
    const { problems } = await load('mixed');
    expect(problemOf(problems, 'c-dup-one.yaml', 'name')).toMatchObject({ line: 1, severity: 'error', message: expect.stringContaining('d-dup-two.yml') });
    expect(problemOf(problems, 'd-dup-two.yml', 'name')).toMatchObject({ line: 6, message: expect.stringContaining('c-dup-one.yaml') });
  });

  it('reports a missing lead file at leads.file', async () => {
    const { problems } = await load('mixed');
    expect(problemOf(problems, 'e-no-leads-file.yaml', 'leads.file')).toMatchObject({ line: 6, column: 9, message: expect.stringContaining('no such file') });
  });

  it('reports the syntax error and the bad day of the other files', async () => {
    const { problems } = await load('mixed');
    expect(problems.find((p) => p.file.endsWith('f-syntax.yaml'))?.line).toBe(3);
    expect(problemOf(problems, 'b-broken.yaml', 'allowed_days[1]').line).toBe(2);
  });

  it('warns when a campaign asks for more calls than the daemon-wide cap', async () => {
    const { problems } = await load('mixed');
    expect(problemOf(problems, 'g-big.yaml', 'max_calls_in_parallel')).toMatchObject({ severity: 'warning', line: 5 });
  });

  it('ignores files that are not campaign files', async () => {
    const { problems } = await load('mixed');
    expect(problems.some((p) => p.file.endsWith('README.txt'))).toBe(false);
  });
});

describe('loadConfig: the daemon file', () => {
  it('reports every daemon rule with its line, and never echoes a token written in the file', async () => {
    const loaded = await load('bad-daemon');
    const f = 'bad-daemon/campaignd.yaml';
    const expected: [string, number][] = [
      ['api.base_url', 2],
      ['api.token', 3],
      ['api.rate_limit.requests_per_minute', 4],
      ['api.rate_limit.burst', 4],
      ['api.server_timezone', 5],
      ['datbase', 6],
      ['http.listen', 9],
      ['webhook.secret_env', 11],
      ['max_calls_in_parallel', 12],
      ['suppression_file', 13],
      ['unknown_attempt_settle_seconds', 14],
      ['log.level', 16],
    ];
    for (const [field, line] of expected) expect(problemOf(loaded.problems, f, field).line, field).toBe(line);
    expect(problemOf(loaded.problems, f, 'datbase').message).toContain('did you mean "database"');
    expect(problemOf(loaded.problems, f, 'api.token').hint).toContain('CAMPAIGND_API_TOKEN');
    expect(JSON.stringify(loaded.problems)).not.toContain('secret-token-never-shown');
    expect(daemonConfigHasErrors(loaded)).toBe(true);
    // The campaigns still load: a broken daemon file is reported, not thrown.
    expect(loaded.campaigns.map((c) => c.name)).toEqual(['a-good']);
  });

  it('throws ConfigUnreadableError with the syntax error lines when the daemon file does not parse', async () => {
    const error = await load('unreadable').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigUnreadableError);
    expect((error as ConfigUnreadableError).problems[0]).toMatchObject({ line: 3, severity: 'error' });
  });

  it('throws ConfigUnreadableError when the daemon file is missing', async () => {
    const error = await loadConfig(path.join(fixtures, 'nowhere/campaignd.yaml'), {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigUnreadableError);
    expect((error as ConfigUnreadableError).message).toContain('no such file');
  });

  it('requires api.base_url unless the environment gives it', async () => {
    const without = await load('env');
    expect(problemOf(without.problems, 'env/campaignd.yaml', 'api.base_url').message).toContain('missing');
    const withEnv = await load('env', { CAMPAIGND_API_BASE_URL: 'http://127.0.0.1:9999/' });
    expect(withEnv.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(withEnv.daemon.api.baseUrl).toBe('http://127.0.0.1:9999');
  });
});

describe('loadConfig: environment overrides', () => {
  const made: string[] = [];
  afterAll(async () => {
    for (const dir of made) await rm(dir, { recursive: true, force: true });
  });

  async function tempConfig(yaml: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'campaignd-config-'));
    made.push(dir);
    await mkdir(path.join(dir, 'campaigns'));
    await writeFile(path.join(dir, 'campaignd.yaml'), yaml);
    return dir;
  }

  it('CAMPAIGND_API_BASE_URL, CAMPAIGND_DATABASE and CAMPAIGND_LOG_LEVEL win over the file', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\ndatabase: ./file.db\nlog: { level: warn }\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), {
      CAMPAIGND_API_BASE_URL: 'https://env.example',
      CAMPAIGND_DATABASE: 'rel/env.db',
      CAMPAIGND_LOG_LEVEL: 'DEBUG',
    }, { cwd: '/srv/work' });
    expect(loaded.daemon.api.baseUrl).toBe('https://env.example');
    expect(loaded.daemon.database).toBe('/srv/work/rel/env.db');
    expect(loaded.daemon.log.level).toBe('debug');
  });

  it('without overrides, relative paths resolve against the daemon file folder', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\ndatabase: ./file.db\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), { CAMPAIGND_DATABASE: '  ' });
    expect(loaded.daemon.database).toBe(path.join(dir, 'file.db'));
    expect(loaded.daemon.log.level).toBe('info');
  });

  it('CAMPAIGND_DATABASE may be :memory:', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), { CAMPAIGND_DATABASE: ':memory:' });
    expect(loaded.daemon.database).toBe(':memory:');
  });

  it('bad environment values are errors that name the variable', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), { CAMPAIGND_API_BASE_URL: 'https://user:pw@env.example', CAMPAIGND_LOG_LEVEL: 'chatty' });
    const files = loaded.problems.filter((p) => p.severity === 'error').map((p) => p.file);
    expect(files).toEqual(['$CAMPAIGND_API_BASE_URL', '$CAMPAIGND_LOG_LEVEL']);
    expect(JSON.stringify(loaded.problems)).not.toContain('pw@');
    expect(daemonConfigHasErrors(loaded)).toBe(true);
  });

  it('a missing campaigns folder is an error on campaigns_dir', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\ncampaigns_dir: ./nope\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), {});
    expect(loaded.problems).toMatchObject([{ field: 'campaigns_dir', line: 2, severity: 'error' }]);
  });

  it('accepts an IPv6 listen address and port 0', async () => {
    const dir = await tempConfig('api: { base_url: "https://file.example" }\nhttp: { listen: "[::1]:0" }\n');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), {});
    expect(loaded.daemon.http).toEqual({ host: '::1', port: 0 });
  });
});

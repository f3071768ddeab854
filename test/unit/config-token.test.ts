import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readToken } from '../../src/config/token.js';
import type { DaemonConfig } from '../../src/config/types.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'campaignd-token-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function daemon(tokenFile?: string): DaemonConfig {
  const d: DaemonConfig = {
    file: path.join(dir, 'campaignd.yaml'),
    api: { baseUrl: 'https://service.example', rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 }, serverTimezone: 'UTC' },
    database: ':memory:',
    campaignsDir: dir,
    http: { host: '127.0.0.1', port: 0 },
    webhook: { secretEnv: 'CAMPAIGND_WEBHOOK_SECRET' },
    unknownAttemptSettleSeconds: 180,
    log: { level: 'info' },
    ha: { leaseSeconds: 10 },
  };
  if (tokenFile) d.api.tokenFile = tokenFile;
  return d;
}

describe('readToken', () => {
  it('reads the token file first, trimmed, even when the environment has one', async () => {
    const file = path.join(dir, 'token');
    await writeFile(file, '\n  tok-from-file \r\n');
    expect(await readToken(daemon(file), { CAMPAIGND_API_TOKEN: 'tok-from-env' })).toEqual({ token: 'tok-from-file', source: { kind: 'file', file } });
  });

  it('falls back to CAMPAIGND_API_TOKEN', async () => {
    expect(await readToken(daemon(), { CAMPAIGND_API_TOKEN: ' tok-from-env ' })).toEqual({ token: 'tok-from-env', source: { kind: 'env', variable: 'CAMPAIGND_API_TOKEN' } });
  });

  it('says where it looked when there is no token', async () => {
    const result = await readToken(daemon(), {});
    expect(result.token).toBeUndefined();
    expect(result.problem).toMatch(/api\.token_file.*CAMPAIGND_API_TOKEN/);
  });

  it('reports a missing or empty token file without falling back silently', async () => {
    const missing = await readToken(daemon(path.join(dir, 'absent')), { CAMPAIGND_API_TOKEN: 'tok-from-env' });
    expect(missing).toEqual({ problem: expect.stringContaining('does not exist'), source: { kind: 'file', file: path.join(dir, 'absent') } });
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '  \n');
    expect((await readToken(daemon(empty), {})).problem).toContain('is empty');
  });

  it('never puts the token into a problem text', async () => {
    const file = path.join(dir, 'two-words');
    await writeFile(file, 'secret-one secret-two\n');
    const fromFile = await readToken(daemon(file), {});
    expect(fromFile.token).toBeUndefined();
    expect(fromFile.problem).not.toContain('secret-');
    const fromEnv = await readToken(daemon(), { CAMPAIGND_API_TOKEN: 'secret-a secret-b' });
    expect(fromEnv.problem).not.toContain('secret-');
  });

  it('reports a token file that is a folder', async () => {
    expect((await readToken(daemon(dir), {})).problem).toContain('it is a folder');
  });
});

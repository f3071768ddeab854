import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createAuthorizer } from '../../src/api/auth.js';
import { BIN, BUILD_CHECKED_ENV } from '../helpers/processes.js';
import { testDatabaseTarget, type TestDatabaseTarget } from '../helpers/test-store.js';

// `campaignd api-key create|list|revoke` through the bin, on the run's database: the key
// is printed once, `list` shows its prefix and never the key, and once revoked the key is
// refused by the API's authorizer reading the same database, as a running daemon would.

let dir: string;
let target: TestDatabaseTarget;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-e2e-api-keys-'));
  target = await testDatabaseTarget(dir);
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${target.database}\ncampaigns_dir: ./campaigns\n`);
});
afterEach(async () => {
  await target.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function campaignd(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CAMPAIGND_CONFIG: 'campaignd.yaml', ...BUILD_CHECKED_ENV, ...target.env };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'api-key', ...args], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err && typeof err.code === 'number' ? err.code : err ? null : 0, stdout, stderr });
    });
  });
}

/** The API's answer to `key` on a route of `scope`, read from the database the commands wrote. */
async function authorize(key: string, scope: 'read' | 'write') {
  const handle = await target.open();
  try {
    return await createAuthorizer({ db: handle.db, clock: { now: () => Date.now() }, loopback: true })(`Bearer ${key}`, scope);
  } finally {
    await handle.close();
  }
}

it('create prints the key once; list shows the prefix only; revoke makes the API refuse it', async () => {
  const created = await campaignd('create', 'crm', '--scope', 'write');
  expect(created.code, created.stderr).toBe(0);
  expect(created.stdout).toMatch(/^cdk_[A-Za-z0-9_-]{43}\n$/);
  const key = created.stdout.trim();
  const prefix = key.slice(0, 12);
  expect(created.stderr).toBe(`API key "crm" (write, prefix ${prefix}) created. This is the only time it is shown: store it now.\n`);

  const reader = await campaignd('create', 'feed', '--scope', 'read', '--json');
  expect(reader.code, reader.stderr).toBe(0);
  const readerKey = (JSON.parse(reader.stdout) as { key: string }).key;
  expect(JSON.parse(reader.stdout)).toEqual({ name: 'feed', scope: 'read', prefix: readerKey.slice(0, 12), key: readerKey });

  const listed = await campaignd('list');
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stderr).toBe('');
  const lines = listed.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^NAME +SCOPE +PREFIX +CREATED +LAST USED +REVOKED$/);
  expect(lines[1]).toMatch(new RegExp(`^crm +write +${prefix}… +\\d{4}-\\d\\d-\\d\\dT[\\d:]+\\+00:00 +never +-$`));
  expect(lines[2]).toMatch(/^feed +read +cdk_/);
  expect(lines[3]).toBe('2 active API keys');
  const asJson = await campaignd('list', '--json');
  for (const out of [listed.stdout, asJson.stdout]) {
    expect(out).not.toContain(key.slice(12));
    expect(out).not.toContain(readerKey.slice(12));
  }
  expect((JSON.parse(asJson.stdout) as { keys: unknown[] }).keys).toEqual([
    { name: 'crm', scope: 'write', prefix, created_at: expect.any(String), last_used_at: null, revoked_at: null },
    { name: 'feed', scope: 'read', prefix: readerKey.slice(0, 12), created_at: expect.any(String), last_used_at: null, revoked_at: null },
  ]);

  expect(await authorize(key, 'write')).toEqual({ ok: true, keyName: 'crm' });
  expect(await authorize(readerKey, 'write')).toMatchObject({ ok: false, status: 403 });
  // The use is recorded, and list shows when.
  const used = JSON.parse((await campaignd('list', '--json')).stdout) as { keys: { last_used_at: string | null }[] };
  expect(used.keys[0]!.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);

  const revoked = await campaignd('revoke', 'crm');
  expect(revoked).toEqual({ code: 0, stdout: 'API key "crm" revoked: requests with it are refused from now on\n', stderr: '' });
  expect(await authorize(key, 'read')).toMatchObject({ ok: false, status: 401 });
  expect(await authorize(readerKey, 'read')).toEqual({ ok: true, keyName: 'feed' });
  expect((await campaignd('list')).stdout).toMatch(/\n1 active API key, 1 revoked\n$/);
});

it('says in one line what is wrong: a taken name, an unknown one, a missing or wrong scope', async () => {
  expect((await campaignd('create', 'crm', '--scope', 'read')).code).toBe(0);
  expect(await campaignd('create', 'crm', '--scope', 'write')).toEqual({
    code: 1,
    stdout: '',
    stderr: 'campaignd api-key: a key named "crm" exists already: choose another name, or revoke it first (campaignd api-key revoke crm)\n',
  });
  expect(await campaignd('revoke', 'nope')).toEqual({ code: 1, stdout: '', stderr: 'campaignd api-key: no active API key named "nope" (campaignd api-key list shows them)\n' });
  expect(await campaignd('create', 'other')).toEqual({ code: 2, stdout: '', stderr: 'campaignd api-key: api-key create needs --scope read (GET routes only) or --scope write (every route)\n' });
  expect(await campaignd('create', 'other', '--scope', 'admin')).toEqual({ code: 2, stdout: '', stderr: 'campaignd api-key: --scope "admin" is not a scope: use --scope read or --scope write\n' });
  // Nothing of the refused commands was stored.
  expect((JSON.parse((await campaignd('list', '--json')).stdout) as { keys: { name: string }[] }).keys.map((k) => k.name)).toEqual(['crm']);
});

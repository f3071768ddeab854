import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/types.js';
import { BUILD_CHECKED_ENV } from '../helpers/processes.js';
import { campaignConfig, createStore, insertAttempt, insertCampaign, insertLeads, makeTempConfig, upsertDaemon } from '../integration/status-fixture.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/campaignd.js');

function campaignd(args: string[], nodeArgs: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAMPAIGND_')));
  Object.assign(env, BUILD_CHECKED_ENV);
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeArgs, BIN, ...args], { cwd: ROOT, env: { ...env, NO_COLOR: '1' }, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let tmp: ReturnType<typeof makeTempConfig>;

beforeAll(async () => {
  tmp = makeTempConfig();
  const store = await createStore(tmp.dbPath);
  const now = Date.now();
  const id = await insertCampaign(store.db, campaignConfig('spring-renewals'));
  const leads = await insertLeads(store.db, id, 'pending', 4);
  await insertLeads(store.db, id, 'completed', 2, now - 60_000);
  await insertAttempt(store.db, { campaignId: id, leadId: leads[0]!, state: 'ended', createdAt: now - 120_000 });
  // A daemon that ran and stopped cleanly a minute ago.
  await upsertDaemon(store.db, { instance: 'gone', pid: 999_999, hostname: 'elsewhere', heartbeatAt: now - 60_000, stoppedAt: now - 59_000 });
  // Closing removes the -wal and -shm files: the state a stopped daemon leaves behind.
  await store.close();
});
afterAll(() => tmp.cleanup());

describe('campaignd status (real process, daemon down)', () => {
  it('--json reads the database and says the daemon is not running', async () => {
    const r = await campaignd(['status', '--json', '--config', tmp.configPath]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.daemon).toMatchObject({ running: false, pid: 999_999, version: '0.1.0', api: 'unknown' });
    expect(report.campaigns).toHaveLength(1);
    expect(report.campaigns[0]).toMatchObject({
      name: 'spring-renewals',
      state: 'running',
      window: { timezone: 'Europe/Berlin' },
      live_calls: 0,
      max_calls_in_parallel: 5,
      leads: { total: 6, pending: 4, completed: 2, calling: 0, retry_scheduled: 0, reached_max_retries: 0, invalid: 0, suppressed: 0 },
      attempts: { total: 1 },
    });
    expect(typeof report.campaigns[0]?.window.open).toBe('boolean');
  });

  it('prints the table by default', async () => {
    const r = await campaignd(['status', '--config', tmp.configPath]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^daemon not running \(last seen 1 min ago, pid 999999 on elsewhere, v0\.1\.0\)/);
    expect(r.stdout).toMatch(/\nspring-renewals\s+running\s+(open until|closed, opens) /);
  });

  // It cost status ~5 ms of its 200 (issue 24) for nothing it uses: to ES-import a
  // CommonJS package (better-sqlite3), node loads its export lexer and parses the package
  // for its export names. The build loads such packages by require() (scripts/bundle.mjs).
  it("does not load node's CommonJS export lexer", async () => {
    const preload = path.join(tmp.dir, 'module-list.cjs');
    const list = path.join(tmp.dir, 'modules.txt');
    fs.writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
    const r = await campaignd(['status', '--config', tmp.configPath], ['--require', preload]);
    expect(r.code).toBe(0);
    const loaded = fs.readFileSync(list, 'utf8').split('\n');
    // The list names node's own modules this way: the check would pass on a renamed one.
    expect(loaded).toContain('NativeModule internal/fs/utils');
    expect(loaded.filter((m) => m.includes('cjs-module-lexer'))).toEqual([]);
  });

  it('an unknown campaign exits 2 with a clear message', async () => {
    const r = await campaignd(['status', 'autumn', '--config', tmp.configPath]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('campaignd status: no campaign named "autumn" in the database (known: spring-renewals)\n');
  });

  it('no database: a clear message and exit 1', async () => {
    const other = makeTempConfig();
    try {
      const r = await campaignd(['status', '--config', other.configPath]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`campaignd status: no database at ${other.dbPath}: has the daemon run yet?\n`);
      expect(fs.existsSync(other.dbPath)).toBe(false);
    } finally {
      other.cleanup();
    }
  });
});

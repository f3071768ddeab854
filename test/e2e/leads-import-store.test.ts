import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BIN, BUILD_CHECKED_ENV } from '../helpers/processes.js';
import { testDatabaseTarget, type TestDatabaseTarget } from '../helpers/test-store.js';

// `campaignd leads import` through the bin on the run's database (the postgres project of vitest.config.ts
// runs it again on PostgreSQL, where rows go by COPY): awkward values arrive intact, a dry
// run writes nothing, a re-import adds nothing. leads-import.test.ts covers the rest on SQLite.

let dir: string;
let target: TestDatabaseTarget;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-e2e-import-store-'));
  target = await testDatabaseTarget(dir);
  fs.mkdirSync(path.join(dir, 'campaigns'));
  fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${target.database}\ncampaigns_dir: ./campaigns\n`);
  fs.writeFileSync(
    path.join(dir, 'campaigns', 'spring.yaml'),
    ['name: spring', 'assistant_id: 1', 'timezone: UTC', 'allowed_days: [monday]', 'allowed_hours_start_time: "09:00:00"', 'allowed_hours_end_time: "18:00:00"', 'max_calls_in_parallel: 2', 'status: paused', 'leads:', '  file: ../leads.csv', ''].join('\n'),
  );
});
afterEach(async () => {
  await target.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function campaignd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...BUILD_CHECKED_ENV, ...target.env };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err && typeof err.code === 'number' ? err.code : err ? null : 0, stdout, stderr });
    });
  });
}

const NOTES = ['say "hi", twice', 'tab\there', 'line\nbreak', 'back\\slash \\N', 'emoji 📞 ünïcödé', ''];

it('imports awkward values intact, writes nothing on --dry-run, and adds nothing on re-import', async () => {
  const q = (v: string): string => `"${v.replaceAll('"', '""')}"`;
  const rows = NOTES.map((note, i) => `+1555555${String(100 + i).padStart(4, '0')},${q(note)}`);
  fs.writeFileSync(path.join(dir, 'leads.csv'), `phone_number,note\r\n${rows.join('\r\n')}\r\n${q('bad\t\\number')},x\r\n`);
  const importArgs = ['leads', 'import', 'leads.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--json'];

  const dry = await campaignd([...importArgs, '--dry-run']);
  expect(dry.stderr).toBe('');
  expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, read: NOTES.length + 1, accepted: NOTES.length, invalid: 1 });
  const readLeads = async () => {
    const handle = await target.open();
    try {
      return await handle.db.selectFrom('leads').select(['phone_number', 'variables_json', 'state']).orderBy('id').execute();
    } finally {
      await handle.close();
    }
  };
  // No lead, if even a schema (a dry run may leave no database at all).
  expect(await readLeads().catch(() => [])).toEqual([]);

  const first = await campaignd(importArgs);
  expect(first.code, first.stderr).toBe(0);
  expect(JSON.parse(first.stdout)).toMatchObject({ read: NOTES.length + 1, accepted: NOTES.length, invalid: 1 });
  const stored = await readLeads();
  expect(stored.map((l) => l.state)).toEqual([...NOTES.map(() => 'pending'), 'invalid']);
  expect(stored.slice(0, NOTES.length).map((l) => (JSON.parse(l.variables_json) as { note: string }).note)).toEqual(NOTES);
  expect(stored.at(-1)!.phone_number).toBe('bad\t\\number');

  const again = await campaignd(importArgs);
  expect(again.code, again.stderr).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ accepted: 0, unchanged: NOTES.length, invalid: 1 });
  expect(await readLeads()).toEqual(stored);
});

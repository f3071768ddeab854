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

it('counts on --dry-run exactly what the import then does, field by field, with every outcome (suppressed by the file and by the store)', async () => {
  fs.appendFileSync(path.join(dir, 'campaignd.yaml'), 'suppression_file: ./dnc.txt\n');
  fs.writeFileSync(path.join(dir, 'dnc.txt'), '+15555550201\n+15555550203\n');
  const importArgs = ['leads', 'import', 'leads.csv', '--campaign', 'spring', '--config', 'campaignd.yaml', '--json'];
  fs.writeFileSync(path.join(dir, 'leads.csv'), 'phone_number,name,secondary_phone_number_1\n+15555550300,Ada,\n+15555550301,Ben,\n12345,Bad,\n');
  const first = await campaignd(importArgs);
  expect(first.code, first.stderr).toBe(0);
  // On the list in the store only (not in the file): the dry run must see it too.
  const suppress = await campaignd(['suppress', 'add', '+15555550202', '--config', 'campaignd.yaml']);
  expect(suppress.code, suppress.stderr).toBe(0);
  // Taken out of the file: the import's sync takes it off the list before judging rows.
  fs.writeFileSync(path.join(dir, 'dnc.txt'), '+15555550201\n');
  fs.writeFileSync(
    path.join(dir, 'leads.csv'),
    [
      'phone_number,name,secondary_phone_number_1',
      '+15555550300,Ada again,', // 2: updated
      '+15555550301,Ben,', // 3: unchanged
      '+15555550302,Fixed,', // 4: was invalid, replaces its placeholder: accepted
      '+15555550303,Dev,', // 5: accepted
      '+15555550201,File,', // 6: suppressed by the file
      '+15555550202,Cli,', // 7: suppressed by the store's list
      '+15555550203,Gone,', // 8: off the list now: accepted
      '+15555550303,Dev again,', // 9: duplicate of line 5
      'not a number,X,', // 10: invalid
      '+15555550304,Eve,123', // 11: accepted, its secondary skipped
      '',
    ].join('\n'),
  );
  const snapshot = async (): Promise<unknown> => {
    const handle = await target.open();
    try {
      return {
        leads: await handle.db.selectFrom('leads').select(['phone_number', 'state', 'variables_json']).orderBy('id').execute(),
        suppressions: await handle.db.selectFrom('suppressions').select(['phone_number', 'source']).orderBy('phone_number').execute(),
      };
    } finally {
      await handle.close();
    }
  };
  const before = await snapshot();

  const dry = await campaignd([...importArgs, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  const human = await campaignd([...importArgs.filter((a) => a !== '--json'), '--dry-run']);
  expect(human.code, human.stderr).toBe(0);
  expect(await snapshot()).toEqual(before);
  const real = await campaignd(importArgs);
  expect(real.code, real.stderr).toBe(0);

  const { dryRun: dryFlag, preview, ...dryCounts } = JSON.parse(dry.stdout) as Record<string, unknown>;
  const { dryRun: realFlag, ...realCounts } = JSON.parse(real.stdout) as Record<string, unknown>;
  expect([dryFlag, realFlag, Array.isArray(preview)]).toEqual([true, false, true]);
  expect(realCounts).toMatchObject({ read: 10, accepted: 4, updated: 1, unchanged: 1, duplicates: 1, invalid: 1, suppressed: 2, warnings: 1 });
  expect(dryCounts).toEqual(realCounts);
  expect(human.stdout).toContain('would import 6 of 10 rows');
  expect(human.stdout).toContain('line 9: +15555550303 duplicates line 5');
});

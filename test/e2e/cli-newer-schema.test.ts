// Every command that opens the store, run through bin/campaignd.js against a database
// written by a newer campaignd: each refuses it the same way, exit 3 and one line on
// stderr naming the database and the fix (issue 22: `campaign` and `suppress` used to
// print "unexpected error" with a stack trace and exit 1). `demo` and `simulator` are not
// here: neither opens the configured store.
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaignd } from '../helpers/processes.js';
import { createStore, makeTempConfig } from '../integration/status-fixture.js';
import { migrations as knownMigrations } from '../../migrations/index.js';

/** The newest schema this build knows, as messages write it (its number). */
const LATEST = Object.keys(knownMigrations).sort().at(-1)!.split('_')[0]!;

let tmp: ReturnType<typeof makeTempConfig>;

beforeAll(async () => {
  tmp = makeTempConfig();
  fs.writeFileSync(path.join(tmp.dir, 'leads.csv'), 'phone_number\n+15550000100\n');
  fs.writeFileSync(path.join(tmp.dir, 'numbers.txt'), '+15550000101\n');
  fs.writeFileSync(
    path.join(tmp.dir, 'campaigns/demo.yaml'),
    'assistant_id: 1\nallowed_days: [monday, tuesday, wednesday, thursday, friday, saturday, sunday]\nallowed_hours_start_time: "00:00"\nallowed_hours_end_time: "00:00"\ntimezone: UTC\nleads: { file: ../leads.csv }\n',
  );
  const store = await createStore(tmp.dbPath);
  await (store.db as unknown as Kysely<any>).insertInto('schema_migrations').values({ version: '9999_future', applied_at: 0 }).execute();
  await store.close();
});
afterAll(() => tmp.cleanup());

const COMMANDS: string[][] = [
  ['run'],
  ['status'],
  ['status', '--json'],
  ['explain', '+15550000100'],
  ['results'],
  ['campaign', 'pause', 'demo'],
  ['campaign', 'resume', 'demo', '--json'],
  ['suppress', 'add', '+15550000101'],
  ['suppress', 'remove', '+15550000101'],
  ['suppress', 'list'],
  ['suppress', 'import', 'numbers.txt'],
  ['leads', 'import', 'leads.csv', '--campaign', 'demo'],
  ['leads', 'import', 'leads.csv', '--campaign', 'demo', '--dry-run'],
  ['forget', '+15550000100'],
];

/** One line: the command, the database, the versions and the fix. */
function expectRefused(r: { code: number; stderr: string }, command: string, prefix = ''): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toBe(`campaignd ${command}: ${prefix}${tmp.dbPath}: database schema 9999 is newer than this campaignd (knows up to ${LATEST}): upgrade campaignd or use another database`);
  expect(r.code).toBe(3);
}

describe('every command against a database newer than this campaignd', () => {
  it.each(COMMANDS.map((args) => [args.join(' '), args] as const))('campaignd %s exits 3 with one line', async (_, args) => {
    const withFiles = args.map((a) => (/\.(csv|txt)$/.test(a) ? path.join(tmp.dir, a) : a));
    const r = await runCampaignd([...withFiles, '--config', tmp.configPath], { CAMPAIGND_WEBHOOK_SECRET: 'x', CAMPAIGND_API_TOKEN: 't' });
    expectRefused(r, args[0]!);
  });

  it('campaignd store copy … exits 3 with one line', async () => {
    const r = await runCampaignd(['store', 'copy', '--from', tmp.dbPath, '--to', path.join(tmp.dir, 'copy.db')]);
    expectRefused(r, 'store', 'the source (--from): ');
  });

  it('campaignd validate --preview names the newer schema instead of a preview', async () => {
    const r = await runCampaignd(['validate', '--preview', '--config', tmp.configPath], { CAMPAIGND_WEBHOOK_SECRET: 'x', CAMPAIGND_API_TOKEN: 't' });
    expect(r.stdout).toContain(`preview: no leads to preview (${tmp.dbPath}: database schema 9999 is newer than this campaignd`);
  });
});

// `campaignd forget` on PostgreSQL (issue 13 on both databases; the PostgreSQL run only): a
// real engine writes calls, webhooks, results and retries into a PostgreSQL database, then
// forget runs as the command runs. Afterwards no row of any table holds the number, its
// lead's variables or its recording URLs (each row read whole, as text), the counts are
// unchanged, and without --keep-calling the suppression list is the one place with the number.
// (The SQLite test, results-forget.test.ts, reads the file's raw bytes, which forget rewrites;
// on PostgreSQL forget prunes the old row versions with a plain VACUUM, and the bytes of the
// pages they held are reused rather than rewritten: the rows are what is checked here.)
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { forgetCommand } from '../../src/cli/forget.js';
import type { CliIo } from '../../src/cli/io.js';
import { openStore } from '../../src/store/open-store.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { COPY_ORDER } from '../../src/store/copy.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Capture } from '../helpers/capture.js';

let stack: Stack | null = null;
let database: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
let dir = '';
afterEach(async () => {
  await stack?.close();
  stack = null;
  await database?.drop();
  database = null;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function storeWithCalls() {
  database = await createTestDatabase();
  const numbers = phoneNumbers(3);
  const target = numbers[1]!;
  stack = await startStack({
    dbFile: database.url,
    campaigns: [{ settings: { maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60 }, leads: numbers.map((phone) => ({ phone })) }],
    fixedOutcomes: [
      { phone_number: target, status: 'busy', duration: 1, count: 1 },
      { phone_number: target, status: 'completed', answered_by: 'human', duration: 20 },
      ...[numbers[0]!, numbers[2]!].map((phone_number) => ({ phone_number, status: 'completed', answered_by: 'human' as const, duration: 20 })),
    ],
  });
  await stack.waitForQuiet();
  await stack.sim.state.settled();
  const urls = stack.simCalls().filter((c) => c.client_phone_number === target && c.recording_url).map((c) => String(c.recording_url));
  await stack.close();
  stack = null;
  // The command's config names the database without its password, which comes from PGPASSWORD.
  const url = new URL(database.url);
  const password = decodeURIComponent(url.password);
  url.password = '';
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-forget-pg-'));
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${url.toString()}\ncampaigns_dir: ./campaigns\n`);
  const io = (): CliIo & { stdout: Capture; stderr: Capture } => ({ stdout: new Capture(), stderr: new Capture(), env: { PGPASSWORD: password }, cwd: dir });
  return { target, urls, configPath, io };
}

/** Per table, the rows whose whole text holds `needle`. */
async function rowsHolding(needle: string): Promise<Record<string, number>> {
  const h = await openStore(database!.url, { readonly: true });
  try {
    const found: Record<string, number> = {};
    for (const table of COPY_ORDER) {
      const row = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} t where t::text like ${`%${needle}%`}`.execute(h.db);
      const n = Number(row.rows[0]!.n);
      if (n > 0) found[table] = n;
    }
    return found;
  } finally {
    await h.close();
  }
}

async function counts(): Promise<unknown> {
  const h = await openStore(database!.url, { readonly: true });
  try {
    return {
      leads: await h.db.selectFrom('lead_counts').select(['state', 'n']).where('n', '>', 0).orderBy('state').execute(),
      attempts: await h.db.selectFrom('attempts').select(['outcome', 'state']).orderBy('id').execute(),
      results: (await h.db.selectFrom('call_results').select('attempt_id').execute()).length,
    };
  } finally {
    await h.close();
  }
}

describe('campaignd forget on PostgreSQL', () => {
  it('--keep-calling: no row of any table holds the number or its data afterwards; the counts stay', async () => {
    const { target, urls, configPath, io } = await storeWithCalls();
    const traces = [target.slice(1), 'lead 3', ...urls];
    expect(urls.length).toBeGreaterThan(0);
    // The check can fail: before, every trace is in some row.
    for (const t of traces) expect(Object.keys(await rowsHolding(t)).length, `before: ${t}`).toBeGreaterThan(0);
    const before = await counts();

    const out = io();
    expect(await forgetCommand([target, '--keep-calling', '--config', configPath], out)).toBe(0);
    expect(out.stdout.text).toMatch(/leads +1 \(variables erased\)/);
    expect(out.stdout.text).toMatch(/attempts +2 \(number erased\)/);

    for (const t of traces) expect(await rowsHolding(t), `after: ${t}`).toEqual({});
    expect(Object.keys(await rowsHolding('lead 2')).length).toBeGreaterThan(0);
    expect(await counts()).toEqual(before);
    // The password the command was given reached none of its output.
    expect(out.stdout.text + out.stderr.text).not.toContain(new URL(database!.url).password);
  });

  it('without --keep-calling the suppression list is the one place that holds the number', async () => {
    const { target, configPath, io } = await storeWithCalls();
    const out = io();
    expect(await forgetCommand([target, '--config', configPath], out)).toBe(0);
    expect(await rowsHolding(target.slice(1))).toEqual({ suppressions: 1 });
  });
});

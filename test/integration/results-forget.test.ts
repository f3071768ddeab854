// `campaignd forget` on a database a real engine wrote (simulator calls, webhooks, call
// list, retries): afterwards the raw bytes of the database file and its write-ahead log
// hold no trace of the number, of its lead's variables, its transcripts or its recording
// URLs; the counts are unchanged; the number is suppressed unless --keep-calling.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { forgetCommand } from '../../src/cli/forget.js';
import type { CliIo } from '../../src/cli/io.js';
import { openDatabase } from '../../src/store/database.js';
import { phoneNumbers, startStack, type Stack } from '../helpers/stack.js';
import { Capture } from '../helpers/capture.js';

let stack: Stack | null = null;
let dir: string;
afterEach(async () => {
  await stack?.close();
  stack = null;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the engine over three leads (the target busy once, then answering), then stops it. */
async function storeWithCalls(): Promise<{ dbFile: string; configPath: string; target: string; urls: string[] }> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-forget-'));
  const dbFile = path.join(dir, 'campaignd.db');
  const numbers = phoneNumbers(3);
  const target = numbers[1]!;
  stack = await startStack({
    dbFile,
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
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${dbFile}\ncampaigns_dir: ./campaigns\n`);
  return { dbFile, configPath, target, urls };
}

function io(): CliIo & { stdout: Capture; stderr: Capture } {
  return { stdout: new Capture(), stderr: new Capture(), env: {}, cwd: dir };
}

/** Every byte of the database's files. */
function rawBytes(dbFile: string): Buffer {
  return Buffer.concat([dbFile, `${dbFile}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
}

async function counts(dbFile: string): Promise<unknown> {
  const h = openDatabase(dbFile, { readonly: true });
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

describe('campaignd forget', () => {
  it('--keep-calling: no trace of the number or its data remains in the database files; the counts stay', async () => {
    const { dbFile, configPath, target, urls } = await storeWithCalls();
    // The stack names the lead of CSV line N "lead N": the target is on line 3.
    const traces = [target.slice(1), 'lead 3', ...urls];
    expect(urls.length).toBeGreaterThan(0);
    const before = rawBytes(dbFile);
    // The test can fail: before, every trace is there.
    for (const t of traces) expect(before.includes(t), `before: ${t}`).toBe(true);
    const countsBefore = await counts(dbFile);

    const out = io();
    expect(await forgetCommand([target, '--keep-calling', '--config', configPath], out)).toBe(0);
    expect(out.stdout.text).toMatch(/leads +1 \(variables erased\)/);
    expect(out.stdout.text).toMatch(/attempts +2 \(number erased\)/);
    // Its lead's only number: no secondary-number row held it.
    expect(out.stdout.text).toMatch(/contacts +0 \(where it was a lead's second or later number/);
    expect(out.stdout.text).toMatch(/call results +2/);
    expect(out.stdout.text).toMatch(/not added \(--keep-calling\)/);

    const after = rawBytes(dbFile);
    for (const t of traces) expect(after.includes(t), `after: ${t}`).toBe(false);
    // The other people's data is still there.
    expect(after.includes('lead 2')).toBe(true);
    expect(await counts(dbFile)).toEqual(countsBefore);
  });

  it('without --keep-calling the number is suppressed: the suppression list is the one place that holds it', async () => {
    const { dbFile, configPath, target } = await storeWithCalls();
    const out = io();
    expect(await forgetCommand([target, '--config', configPath, '--json'], out)).toBe(0);
    expect(JSON.parse(out.stdout.text)).toMatchObject({ phone_number: target, leads: 1, attempts: 2, suppressed: true, file_rewritten: true });
    const h = openDatabase(dbFile, { readonly: true });
    try {
      expect(await h.db.selectFrom('suppressions').selectAll().execute()).toEqual([{ phone_number: target, source: 'forget', added_at: expect.any(Number) }]);
      expect(await h.db.selectFrom('leads').select('id').where('phone_number', '=', target).execute()).toEqual([]);
    } finally {
      await h.close();
    }
    const bytes = rawBytes(dbFile).toString('latin1');
    // Twice: the suppressions row and its primary-key index entry.
    expect(bytes.split(target.slice(1)).length - 1).toBe(2);
  });

  it('bad input names the fix', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-forget-'));
    await expect(forgetCommand(['not-a-number', '--config', path.join(dir, 'none.yaml')], io())).rejects.toThrow(/is not a phone number .*E\.164/);
    await expect(forgetCommand([], io())).rejects.toThrow(/expected one PHONE_NUMBER/);
  });
});

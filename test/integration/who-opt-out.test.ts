// Who may be called (docs/design.md §11), opt-outs and the suppression list: an opt-out arriving by webhook while the
// same number has a retry scheduled in another campaign suppresses the number everywhere
// at once and cancels that retry; `campaignd suppress` manages the list.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { readNumberList, suppressCommand } from '../../src/cli/suppress.js';
import { normalisePhone } from '../../src/leads/phone.js';
import { testDatabaseTarget, type TestDatabaseTarget } from '../helpers/test-store.js';
import { explainNumber } from '../../src/explain/explain.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { systemClock } from '../../src/time/clock.js';
import { startStack, waitUntil, type Stack } from '../helpers/stack.js';
import { Capture } from '../helpers/capture.js';

const X = '+12025550201';
const OTHER = '+12025550202';

describe('opt-out by webhook (docs/design.md §11)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('suppresses the number in every campaign at once and cancels its scheduled retry', async () => {
    stack = await startStack({
      scale: 400,
      startEngine: false,
      campaigns: [
        // Renewals reaches X first: busy, so a retry is scheduled an hour later.
        { name: 'renewals', settings: { retryIntervalSeconds: 3600, maxRetries: 3 }, leads: [{ phone: X }, { phone: OTHER }] },
        // The survey's call to X is answered, and the person says "no more calls".
        { name: 'survey', settings: { optOut: { variable: 'do_not_call', values: ['Yes'] } }, leads: [{ phone: X }] },
      ],
      fixedOutcomes: [
        { phone_number: X, status: 'busy', count: 1 },
        { phone_number: X, status: 'completed', answered_by: 'human', duration: 30 },
        { phone_number: OTHER, status: 'busy' },
      ],
    });
    const s = stack;
    // The assistant extracts do_not_call; the simulator fills a string variable with "yes".
    await s.client.updateAssistant(s.assistantId, { post_call_schema: [{ name: 'do_not_call', type: 'string', description: 'the person asks for no more calls' }] } as never);
    await s.startEngine();
    const lead = async (campaign: string, phone: string) =>
      s.db.selectFrom('leads').innerJoin('campaigns', 'campaigns.id', 'leads.campaign_id').select(['leads.state', 'leads.state_reason']).where('campaigns.name', '=', campaign).where('leads.phone_number', '=', phone).executeTakeFirstOrThrow();
    await waitUntil(async () => (await lead('renewals', X)).state === 'suppressed', { timeoutMs: 30_000, message: async () => JSON.stringify(await lead('renewals', X)) });
    const row = await s.db.selectFrom('suppressions').selectAll().where('phone_number', '=', X).executeTakeFirstOrThrow();
    expect(row.source).toBe('opt-out:survey');
    expect((await lead('renewals', X)).state_reason).toBe('opted out of calls');
    const explained = await explainNumber(s.db, X, s.clock.now(), () => true);
    expect(explained.leads.find((l) => l.campaign === 'renewals')?.message).toBe('on the do-not-call (suppression) list (opted out of calls): never dialled');
    expect((await lead('survey', X)).state).toBe('completed');
    // OTHER keeps its own retries: the opt-out is about X only.
    expect((await lead('renewals', OTHER)).state).not.toBe('suppressed');
    const toX = () => s.simCalls().filter((c) => c.client_phone_number === X);
    expect(toX().map((c) => c.status)).toEqual(['busy', 'completed']);
    // Past the hour the retry was due: still no third call to X.
    const retryDue = s.clock.now() + 3600_000;
    await waitUntil(() => s.clock.now() > retryDue + 5 * 60_000, { timeoutMs: 30_000 });
    expect(toX()).toHaveLength(2);
  });
});

describe('campaignd suppress', () => {
  let dir: string | undefined;
  let target: TestDatabaseTarget | undefined;
  afterEach(async () => {
    await target?.drop();
    target = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function run(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
    const stdout = new Capture();
    const stderr = new Capture();
    const io: CliIo = { stdout, stderr, env: { ...target?.env }, cwd };
    const code = await suppressCommand([...args, '--config', path.join(cwd, 'campaignd.yaml')], io);
    return { code, out: stdout.text, err: stderr.text };
  }

  it('adds, imports (reporting bad lines by number), lists and removes, normalising as leads are; waiting leads become suppressed', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-suppress-'));
    target = await testDatabaseTarget(dir);
    fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${target.database}\ncampaigns_dir: ./campaigns\n`);
    // A lead waiting for a retry to a number about to be imported.
    const store = await target.open();
    await migrateToLatest(store.db, { clock: systemClock });
    const now = Date.now();
    const c = await store.db.insertInto('campaigns').values({ name: 'c', state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, config_json: '{}', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('leads').values({ campaign_id: c.id, dedupe_key: '+14155550103', phone_number: '+14155550103', state: 'retry-scheduled', next_due_at: now + 3600_000, created_at: now, updated_at: now }).execute();
    await store.close();

    expect((await run(['add', '(202) 555-0101', '--country', 'US'], dir)).code).toBe(0);
    fs.writeFileSync(path.join(dir, 'dnc.csv'), 'name,phone_number\nAnn,+1 415 555 0103\nBob,call me maybe\n\nCid,+442071838750\n');
    const imported = await run(['import', 'dnc.csv'], dir);
    expect(imported.code).toBe(1); // an invalid line is a problem to look at
    expect(imported.err).toContain('dnc.csv:3: "call me maybe" is not a phone number');
    expect(imported.out).toContain('2 added');
    expect(imported.out).toContain('1 waiting lead suppressed');

    const listed = JSON.parse((await run(['list', '--json'], dir)).out) as { numbers: { phone_number: string; source: string }[] };
    expect(listed.numbers.map((n) => n.phone_number).sort()).toEqual(['+12025550101', '+14155550103', '+442071838750']);
    expect(new Set(listed.numbers.map((n) => n.source))).toEqual(new Set(['cli']));

    expect((await run(['remove', '+12025550101'], dir)).out).toContain('1 removed');
    expect(JSON.parse((await run(['list', '--json'], dir)).out).numbers).toHaveLength(2);
    const bad = await run(['add', 'nope'], dir);
    expect(bad.code).toBe(1);
    expect(bad.err).toBe('"nope" is not a phone number campaignd can read: not a phone number\n');

    const check = await target.open({ readonly: true });
    const leadRow = await check.db.selectFrom('leads').select(['state', 'next_due_at']).executeTakeFirstOrThrow();
    await check.close();
    expect(leadRow).toEqual({ state: 'suppressed', next_due_at: null });
  });

  it('reads plain lists and headed CSVs alike', () => {
    expect(readNumberList('+12025550101\n# comment\n\n+12025550102 \n')).toEqual({ numbers: ['+12025550101', '+12025550102'], problems: [] });
    expect(readNumberList('Phone;Name\n2025550103;A\nx;B\n', (cell) => normalisePhone(cell, 'US'))).toEqual({ numbers: ['+12025550103'], problems: [{ line: 3, text: 'x', reason: 'not a phone number' }] });
  });
});

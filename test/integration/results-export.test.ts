// `campaignd results` over a real SQLite file: one record per lead, the fixed columns (docs/design.md §9),
// the lead's own columns and extracted.NAME; CSV read back by an independent RFC 4180
// parser (csv-parse) gives every value exactly; JSONL carries transcripts and attempts;
// a writer holding the database does not stop it.
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resultsCommand } from '../../src/cli/results.js';
import { CliError, type CliIo } from '../../src/cli/io.js';
import { readGivenCall } from '../../src/results/given.js';
import { mergeCallResult } from '../../src/store/results.js';
import type { Database } from '../../src/store/types.js';
import { campaignConfig, createStore, insertCampaign, makeTempConfig } from './status-fixture.js';
import { Capture } from '../helpers/capture.js';

const T = Date.UTC(2026, 10, 20, 9, 0, 0);
const NASTY = 'Müller, "Jo" 😀\nzweite Zeile; ünïcødé';
let tmp: ReturnType<typeof makeTempConfig>;

function io(): CliIo & { stdout: Capture; stderr: Capture } {
  return { stdout: new Capture(), stderr: new Capture(), env: {}, cwd: tmp.dir };
}

async function lead(db: Kysely<Database>, campaignId: number, phone: string, variables: Record<string, unknown>, state: 'completed' | 'pending' | 'reached-max-retries', updatedAt = T): Promise<number> {
  const r = await db
    .insertInto('leads')
    .values({ campaign_id: campaignId, dedupe_key: phone, phone_number: phone, variables_json: JSON.stringify(variables), timezone: null, state, state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, created_at: T, updated_at: updatedAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

async function attempt(db: Kysely<Database>, campaignId: number, leadId: number, phone: string, outcome: 'busy' | 'success', at: number, given?: Record<string, unknown>): Promise<number> {
  const r = await db
    .insertInto('attempts')
    .values({ campaign_id: campaignId, lead_id: leadId, contact_position: 0, phone_number: phone, assistant_id: 12, state: 'ended', call_id: String(at), call_status: outcome === 'busy' ? 'busy' : 'completed', answered_by: outcome === 'success' ? 'human' : null, outcome, outcome_source: 'poll', created_at: at, sent_at: at, ended_at: at + 60_000 })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (given) await mergeCallResult(db, { attemptId: r.id, campaignId, leadId }, readGivenCall(given, 'UTC').fields, { source: 'webhook', now: at + 60_000, keepTranscripts: true });
  return r.id;
}

beforeEach(async () => {
  tmp = makeTempConfig();
  const store = await createStore(tmp.dbPath);
  const { db } = store;
  const spring = await insertCampaign(db, campaignConfig('spring'));
  const other = await insertCampaign(db, campaignConfig('other'));
  const ada = await lead(db, spring, '+4915100000001', { first_name: NASTY, state: 'Bayern' }, 'completed');
  await attempt(db, spring, ada, '+4915100000001', 'busy', T - 3600_000, { status: 'busy', duration: 0 });
  await attempt(db, spring, ada, '+4915100000001', 'success', T, {
    status: 'completed',
    duration: 42.5,
    cost: '0.12',
    created_at: '2026-11-20T09:00:00Z',
    finished_at: '2026-11-20T09:00:42Z',
    recording_url: 'https://rec.example/1.mp3',
    transcript: [{ text: NASTY, sender: 'user' }],
    extracted_variables: { interested: true, callback: 'Tue, 10:00', note: NASTY },
  });
  await lead(db, spring, '+4915100000002', { first_name: 'Bob', plan: 'gold' }, 'pending', T - 86_400_000);
  const carl = await lead(db, other, '+4915100000003', { first_name: 'Carl' }, 'reached-max-retries');
  await attempt(db, other, carl, '+4915100000003', 'busy', T, { status: 'busy', extracted_variables: { other_only: 1 } });
  await store.close();
});
afterEach(() => tmp.cleanup());

describe('campaignd results', () => {
  it('CSV: one record per lead, the fixed columns, lead columns, extracted.NAME; every value survives a round trip', async () => {
    const out = io();
    expect(await resultsCommand(['spring', '--config', tmp.configPath], out)).toBe(0);
    expect(out.stdout.text.startsWith('\uFEFF')).toBe(true);
    expect(out.stdout.text).toContain('\r\n');
    const rows = parse(out.stdout.text, { bom: true, columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual([
      'campaign', 'lead_id', 'phone_number', 'state', 'state_reason', 'attempts', 'last_outcome', 'last_call_status', 'answered_by',
      'duration_seconds', 'started_at', 'ended_at', 'times_from', 'cost', 'recording_url', 'variant',
      'callback_asked', 'callback_state', 'callback_scheduled_at', 'callback_refused_reason', 'callback_call', 'first_name', 'lead.state', 'plan',
      'extracted.interested', 'extracted.callback', 'extracted.note',
    ]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      campaign: 'spring', phone_number: '+4915100000001', state: 'completed', attempts: '2', last_outcome: 'success', last_call_status: 'completed',
      answered_by: 'human', duration_seconds: '42.5', started_at: '2026-11-20T09:00:00.000Z', ended_at: '2026-11-20T09:00:42.000Z', times_from: 'service', cost: '0.12',
      recording_url: 'https://rec.example/1.mp3', first_name: NASTY, 'lead.state': 'Bayern', plan: '',
      'extracted.interested': 'true', 'extracted.callback': 'Tue, 10:00', 'extracted.note': NASTY,
    });
    expect(rows[1]).toMatchObject({ phone_number: '+4915100000002', state: 'pending', attempts: '0', last_outcome: '', first_name: 'Bob', plan: 'gold', 'extracted.note': '' });
    expect(out.stderr.text).toMatch(/2 leads of 1 campaign written/);
  });

  it('every campaign without CAMPAIGN; --since keeps leads changed since; --output writes a 0600 file; --no-bom', async () => {
    const out = io();
    expect(await resultsCommand(['--config', tmp.configPath, '--since', '2026-11-20', '--output', 'r.csv', '--no-bom'], out)).toBe(0);
    const file = path.join(tmp.dir, 'r.csv');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.startsWith('campaign,')).toBe(true);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.phone_number)).toEqual(['+4915100000001', '+4915100000003']);
    expect(Object.keys(rows[0]!)).toContain('extracted.other_only');
    expect(out.stdout.text).toBe('');
  });

  it('JSONL: the transcript as given and every attempt', async () => {
    const out = io();
    expect(await resultsCommand(['spring', '--format', 'jsonl', '--config', tmp.configPath], out)).toBe(0);
    const lines = out.stdout.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ campaign: 'spring', attempts: 2, transcript: [{ text: NASTY, sender: 'user' }], variables: { first_name: NASTY, state: 'Bayern' }, extracted: { interested: true } });
    const history = lines[0]!.attempt_history as Record<string, unknown>[];
    expect(history.map((a) => [a.outcome, a.call_status])).toEqual([['busy', 'busy'], ['success', 'completed']]);
    expect(history[1]).toMatchObject({ transcript: [{ text: NASTY, sender: 'user' }], recording_url: 'https://rec.example/1.mp3', result_source: 'webhook' });
    expect(lines[1]).toMatchObject({ attempts: 0, attempt_history: [], transcript: null });
  });

  it('reads while another connection holds a write transaction open (the daemon writing)', async () => {
    const writer = new SqliteDatabase(tmp.dbPath);
    try {
      writer.pragma('journal_mode = WAL');
      writer.exec('BEGIN IMMEDIATE');
      writer.prepare(`update leads set variables_json = '{"first_name":"uncommitted"}'`).run();
      const out = io();
      expect(await resultsCommand(['spring', '--config', tmp.configPath], out)).toBe(0);
      expect(out.stdout.text).not.toContain('uncommitted');
      expect(out.stdout.text).toContain('Bob');
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('bad usage names the fix', async () => {
    await expect(resultsCommand(['nope', '--config', tmp.configPath], io())).rejects.toThrow(/no campaign named "nope"/);
    await expect(resultsCommand(['--format', 'xml', '--config', tmp.configPath], io())).rejects.toThrow(/use csv or jsonl/);
    await expect(resultsCommand(['--since', 'yesterday', '--config', tmp.configPath], io())).rejects.toThrow(CliError);
  });
});

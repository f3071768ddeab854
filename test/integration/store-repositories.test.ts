import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignConfig } from '../../src/config/types.js';
import { getCampaignByName, listCampaigns, setCampaignProblem, setCampaignState, upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { listLeadEvents, recordEvent } from '../../src/store/events.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { isSuppressed, suppressPendingLeads, syncSuppressions } from '../../src/store/suppressions.js';
import { readSuppressionFile } from '../../src/leads/suppression-file.js';
import type { LeadState } from '../../src/store/types.js';

let handle: DatabaseHandle;
beforeEach(async () => {
  handle = await openTestStore();
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => handle.close());

function campaignConfig(over: Partial<CampaignConfig> = {}): CampaignConfig {
  return {
    name: 'spring',
    file: '/etc/campaignd/campaigns/spring.yaml',
    assistantId: 12,
    allowedDays: [1, 2, 3, 4, 5],
    allowedHoursStart: 9 * 3600,
    allowedHoursEnd: 18 * 3600,
    maxCallsInParallel: 5,
    maxRetries: 2,
    retryIntervalSeconds: 3600,
    markCompleteWhenNoLeads: true,
    retryOn: ['busy', 'no-answer', 'failed', 'voicemail'],
    blackoutDates: [],
    initialStatus: 'running',
    leads: { file: '/etc/campaignd/leads/spring.csv' },
    allowDuplicates: false,
    ...over,
  };
}

describe('campaigns', () => {
  it('inserts with the initial status, then refreshes settings but never the operator state', async () => {
    const db = handle.db;
    const first = await upsertCampaign(db, campaignConfig({ initialStatus: 'paused' }), { timezone: 'Europe/Berlin' }, 1000);
    expect(first).toMatchObject({ name: 'spring', state: 'paused', assistant_id: 12, timezone: 'Europe/Berlin', max_calls_in_parallel: 5, created_at: 1000, updated_at: 1000 });

    await setCampaignState(db, 'spring', 'running', 2000);
    const again = await upsertCampaign(db, campaignConfig({ initialStatus: 'paused', assistantId: 13, maxCallsInParallel: 7, leads: { remoteCampaignId: 17 } }), { timezone: null }, 3000);
    expect(again).toMatchObject({ id: first.id, state: 'running', assistant_id: 13, max_calls_in_parallel: 7, remote_campaign_id: 17, timezone: null, created_at: 1000, updated_at: 3000 });
    expect((JSON.parse(again.config_json) as CampaignConfig).maxCallsInParallel).toBe(7);
    expect(await listCampaigns(db)).toHaveLength(1);
  });

  it('sets state (with completed_at) and problems, and finds campaigns by name', async () => {
    const db = handle.db;
    const row = await upsertCampaign(db, campaignConfig(), { timezone: 'UTC' }, 1);
    expect(await setCampaignState(db, 'spring', 'completed', 50)).toMatchObject({ state: 'completed', completed_at: 50 });
    expect(await setCampaignState(db, 'spring', 'running', 60)).toMatchObject({ state: 'running', completed_at: null });
    expect(await setCampaignState(db, 'nope', 'paused', 60)).toBeUndefined();
    await setCampaignProblem(db, row.id, 'assistant 12 does not exist', 70);
    expect((await getCampaignByName(db, 'spring'))?.problem).toBe('assistant 12 does not exist');
    await setCampaignProblem(db, row.id, null, 80);
    expect((await getCampaignByName(db, 'spring'))?.problem).toBeNull();
    expect(await getCampaignByName(db, 'nope')).toBeUndefined();
  });
});

describe('events', () => {
  it('records events with JSON data and lists a lead’s newest first', async () => {
    const db = handle.db;
    const c = await upsertCampaign(db, campaignConfig(), { timezone: 'UTC' }, 1);
    const a = await recordEvent(db, { at: 10, campaignId: c.id, leadId: 5, kind: 'attempt-placed', data: { call_id: 'x' } });
    const b = await recordEvent(db, { at: 20, leadId: 5, kind: 'outcome' });
    expect(b).toBeGreaterThan(a);
    const events = await listLeadEvents(db, 5);
    expect(events.map((e) => [e.kind, e.data_json, e.campaign_id])).toEqual([
      ['outcome', null, null],
      ['attempt-placed', '{"call_id":"x"}', c.id],
    ]);
  });
});

describe('suppressions', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-dnc-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads one number a line, ignoring comments and blanks, reporting bad lines', async () => {
    const file = path.join(dir, 'dnc.txt');
    fs.writeFileSync(file, '\uFEFF# do not call\r\n+15555550100\r\n\r\n+49 30 1234567  # asked twice\n030 1234567\nnonsense\n+15555550100\n');
    expect(await readSuppressionFile(file)).toEqual({
      numbers: ['+15555550100', '+49301234567'],
      problems: [
        { line: 5, text: '030 1234567', reason: 'national number without a country: add a country column or default_country' },
        { line: 6, text: 'nonsense', reason: 'not a phone number' },
      ],
    });
  });

  it('syncs the file set, keeping other sources, and suppresses waiting leads only', async () => {
    const db = handle.db;
    await db.insertInto('suppressions').values({ phone_number: '+15555550199', source: 'api', added_at: 1 }).execute();
    expect(await syncSuppressions(db, ['+15555550100', '+15555550101'], 10)).toEqual({ added: 2, removed: 0 });
    expect(await syncSuppressions(db, ['+15555550101', '+15555550102'], 20)).toEqual({ added: 1, removed: 1 });
    expect(await isSuppressed(db, '+15555550100')).toBe(false);
    expect(await isSuppressed(db, '+15555550102')).toBe(true);
    expect(await isSuppressed(db, '+15555550199')).toBe(true);

    const c = await upsertCampaign(db, campaignConfig(), { timezone: 'UTC' }, 1);
    const lead = (phone: string, state: LeadState) => ({
      campaign_id: c.id, dedupe_key: `${phone}-${state}`, phone_number: phone, state, timezone: null, state_reason: null,
      next_due_at: 5, remote_lead_id: null, source_file: null, source_line: null, created_at: 1, updated_at: 1,
    });
    await db.insertInto('leads').values([
      lead('+15555550101', 'pending'),
      lead('+15555550102', 'retry-scheduled'),
      lead('+15555550102', 'calling'),
      lead('+15555550101', 'completed'),
      lead('+15555550103', 'pending'),
    ]).execute();
    expect(await suppressPendingLeads(db, 30)).toBe(2);
    const rows = await db.selectFrom('leads').select(['dedupe_key', 'state', 'next_due_at', 'state_reason']).orderBy('id').execute();
    expect(rows.map((r) => [r.dedupe_key, r.state, r.next_due_at])).toEqual([
      ['+15555550101-pending', 'suppressed', null],
      ['+15555550102-retry-scheduled', 'suppressed', null],
      ['+15555550102-calling', 'calling', 5],
      ['+15555550101-completed', 'completed', 5],
      ['+15555550103-pending', 'pending', 5],
    ]);
    expect(rows[0]?.state_reason).toBe('on the suppression list');
  });
});

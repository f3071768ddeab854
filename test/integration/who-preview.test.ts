// Who may be called (docs/design.md §11), validate --preview: the stored leads of a campaign counted by when they can
// be called (now, later today, not today, never) and why, as explain would say.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { validateCommand } from '../../src/cli/validate.js';
import type { CampaignConfig } from '../../src/config/types.js';
import { previewCampaigns } from '../../src/explain/preview.js';
import { importLeads } from '../../src/leads/import.js';
import type { ReadLeadResult } from '../../src/leads/read-leads.js';
import { readRulesFile } from '../../src/config/calling-rules.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { openTestStore } from '../helpers/test-store.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { addSuppressions } from '../../src/store/suppressions.js';
import { ManualClock } from '../../src/time/clock.js';

const NOW = Date.UTC(2026, 5, 1, 15, 0, 0); // Monday 15:00 UTC: 11:00 New York, 08:00 Los Angeles, 05:00 Honolulu, 00:00 Tuesday Tokyo
const H = 3600;

async function* rows(phones: string[]): AsyncGenerator<ReadLeadResult> {
  let line = 1;
  for (const p of phones) {
    line++;
    yield p.startsWith('+') ? { ok: true, line, lead: { phoneNumber: p, secondary: [], variables: {} } } : { ok: false, line, phoneText: p, reason: 'not a phone number', variables: {} } as unknown as ReadLeadResult;
  }
}

describe('validate --preview (docs/design.md §11)', () => {
  let store: DatabaseHandle | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('counts leads callable now, later today, not today and never, with explain reasons', async () => {
    store = await openTestStore();
    const db = store.db;
    await migrateToLatest(db, { clock: new ManualClock(NOW) });
    const { rules } = await readRulesFile(path.join(import.meta.dirname, '../../config/calling-rules/us.yaml'));
    const cfg: CampaignConfig = {
      name: 'p', file: '/p.yaml', assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
      maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: ['busy'], blackoutDates: [],
      leadLocalHours: { start: 9 * H, end: 17 * H }, initialStatus: 'running', leads: {}, allowDuplicates: false,
      callingPolicy: { rules: rules!, caps: [] },
    };
    const row = await upsertCampaign(db, cfg, { timezone: 'UTC' }, NOW);
    const phones = ['+12125550100', '+12135550100', '+18085550100', '+81312345678', '+12125550101', '+13055550100', '+12125550199', 'call me'];
    await importLeads(db, { id: row.id, allowDuplicates: false }, rows(phones), { now: NOW - 60_000, sourceFile: '/p.csv' });
    // A retry due tomorrow; Florida already called 3 times in the last 24 h; one number on the list.
    await db.updateTable('leads').set({ state: 'retry-scheduled', next_due_at: NOW + 20 * H * 1000 }).where('phone_number', '=', '+12125550101').execute();
    const fl = await db.selectFrom('leads').select('id').where('phone_number', '=', '+13055550100').executeTakeFirstOrThrow();
    for (const hoursAgo of [1, 2, 3]) {
      const t = NOW - hoursAgo * H * 1000;
      await db.insertInto('attempts').values({ campaign_id: row.id, lead_id: fl.id, contact_position: 0, phone_number: '+13055550100', assistant_id: 1, state: 'ended', counted: 1, created_at: t, sent_at: t, answered_at: t, ended_at: t + 60_000 }).execute();
    }
    await addSuppressions(db, ['+12125550199'], 'cli', NOW);

    const [p] = await previewCampaigns(db, [cfg], NOW);
    expect(p!.leads).toBe(8);
    expect(p!.counts).toEqual({ now: 1, later_today: 2, not_today: 3, never: 2 });
    expect(p!.reasons).toEqual({
      now: { due: 1 },
      later_today: { 'lead-local-hours (America/Los_Angeles)': 1, 'lead-local-hours (Pacific/Honolulu)': 1 },
      not_today: { 'lead-local-hours (Asia/Tokyo)': 1, 'retry-not-due': 1, 'attempt-cap (3 per 24 h, calling rule US-FL (Fla. Stat. § 501.616(6)))': 1 },
      never: { invalid: 1, suppressed: 1 },
    });
  });

  it('names the daemon-wide limit of the files being validated when the live calls fill it', async () => {
    store = await openTestStore();
    const db = store.db;
    await migrateToLatest(db, { clock: new ManualClock(NOW) });
    const cfg = (name: string): CampaignConfig => ({
      name, file: `/${name}.yaml`, assistantId: 1, timezone: 'UTC', allowedDays: [1, 2, 3, 4, 5, 6, 7], allowedHoursStart: 0, allowedHoursEnd: 0,
      maxCallsInParallel: 3, maxRetries: 2, retryIntervalSeconds: 60, markCompleteWhenNoLeads: true, retryOn: ['busy'], blackoutDates: [],
      initialStatus: 'running', leads: {}, allowDuplicates: false,
    });
    const busy = await upsertCampaign(db, cfg('busy'), { timezone: 'UTC' }, NOW);
    const waiting = await upsertCampaign(db, cfg('waiting'), { timezone: 'UTC' }, NOW);
    await importLeads(db, { id: busy.id, allowDuplicates: false }, rows(['+12125550100']), { now: NOW - 60_000, sourceFile: '/b.csv' });
    await importLeads(db, { id: waiting.id, allowDuplicates: false }, rows(['+12125550101', '+12125550102']), { now: NOW - 60_000, sourceFile: '/w.csv' });
    const lead = await db.selectFrom('leads').select('id').where('campaign_id', '=', busy.id).executeTakeFirstOrThrow();
    await db.updateTable('leads').set({ state: 'calling' }).where('id', '=', lead.id).execute();
    await db.insertInto('attempts').values({ campaign_id: busy.id, lead_id: lead.id, contact_position: 0, phone_number: '+12125550100', assistant_id: 1, state: 'placed', counted: 1, created_at: NOW - 1000, sent_at: NOW - 1000 }).execute();

    const [, limited] = await previewCampaigns(db, [cfg('busy'), cfg('waiting')], NOW, { daemonMaxCalls: 1 });
    expect(limited!.reasons.now).toEqual({ 'daemon-at-limit': 2 });
    const [, free] = await previewCampaigns(db, [cfg('busy'), cfg('waiting')], NOW);
    expect(free!.reasons.now).toEqual({ due: 2 });
  });

  it('is printed by campaignd validate --preview, and says so when there is no store yet', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-preview-'));
    fs.mkdirSync(path.join(dir, 'campaigns'));
    fs.writeFileSync(path.join(dir, 'leads.csv'), 'phone_number\n+12125550100\n');
    fs.writeFileSync(path.join(dir, 'campaigns', 'c.yaml'), 'assistant_id: 1\ntimezone: UTC\nallowed_days: [mon, tue, wed, thu, fri, sat, sun]\nallowed_hours_start_time: "00:00"\nallowed_hours_end_time: "00:00"\nleads: { file: ../leads.csv }\n');
    fs.writeFileSync(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: http://127.0.0.1:9\ndatabase: ${path.join(dir, 'c.db')}\ncampaigns_dir: ./campaigns\n`);
    const out = { text: '' };
    const sink = new Writable({ write(chunk: Buffer, _e, cb) { out.text += String(chunk); cb(); } });
    const io: CliIo = { stdout: sink, stderr: new Writable({ write: (_c, _e, cb) => cb() }), env: {}, cwd: dir };
    await validateCommand(['--preview', '--config', path.join(dir, 'campaignd.yaml')], io);
    expect(out.text).toMatch(/preview: no leads to preview \(no database at/);
    // With a store holding the campaign's leads: a JSON preview per campaign.
    const s = openDatabase(path.join(dir, 'c.db'));
    await migrateToLatest(s.db, { clock: new ManualClock(NOW) });
    const { loadConfig } = await import('../../src/config/load.js');
    const loaded = await loadConfig(path.join(dir, 'campaignd.yaml'), {});
    const r = await upsertCampaign(s.db, loaded.campaigns[0]!, { timezone: 'UTC' }, NOW);
    await importLeads(s.db, { id: r.id, allowDuplicates: false }, rows(['+12125550100']), { now: NOW, sourceFile: '/x.csv' });
    await s.close();
    out.text = '';
    await validateCommand(['--preview', '--json', '--config', path.join(dir, 'campaignd.yaml')], io);
    const doc = JSON.parse(out.text) as { preview: { campaign: string; leads: number; counts: Record<string, number> }[] };
    expect(doc.preview).toEqual([expect.objectContaining({ campaign: 'c', leads: 1, counts: { now: 1, later_today: 0, not_today: 0, never: 0 } })]);
  });
});

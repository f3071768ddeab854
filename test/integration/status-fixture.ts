// Shared by the status tests: a real SQLite file, migrated, with campaigns, leads,
// attempts and daemon rows inserted the way the daemon stores them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { CampaignConfig } from '../../src/config/types.js';
import type { AttemptState, CampaignState, Database, LeadState, NewAttempt } from '../../src/store/types.js';

/** A temp folder holding campaignd.yaml (database ./campaignd.db) and an empty campaigns/. */
export function makeTempConfig(): { dir: string; configPath: string; dbPath: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-status-'));
  fs.mkdirSync(path.join(dir, 'campaigns'));
  const configPath = path.join(dir, 'campaignd.yaml');
  fs.writeFileSync(configPath, 'api:\n  base_url: http://127.0.0.1:9\ndatabase: ./campaignd.db\ncampaigns_dir: ./campaigns\n');
  return { dir, configPath, dbPath: path.join(dir, 'campaignd.db'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Opens (creating) and migrates a database file. */
export async function createStore(file: string): Promise<DatabaseHandle> {
  const handle = openDatabase(file);
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  return handle;
}

/** A normalised campaign as the daemon stores it in campaigns.config_json. */
export function campaignConfig(name: string, overrides: Partial<CampaignConfig> = {}): CampaignConfig {
  return {
    name,
    file: `/etc/campaignd/campaigns/${name}.yaml`,
    assistantId: 12,
    timezone: 'Europe/Berlin',
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
    leads: { file: `/etc/campaignd/leads/${name}.csv` },
    allowDuplicates: false,
    ...overrides,
  };
}

/** Inserts a campaign row and returns its id. */
export async function insertCampaign(
  db: Kysely<Database>,
  cfg: CampaignConfig,
  row: { state?: CampaignState; timezone?: string | null; problem?: string | null; now?: number } = {},
): Promise<number> {
  const now = row.now ?? 0;
  const r = await db
    .insertInto('campaigns')
    .values({
      name: cfg.name,
      state: row.state ?? 'running',
      assistant_id: cfg.assistantId,
      timezone: row.timezone === undefined ? (cfg.timezone ?? null) : row.timezone,
      max_calls_in_parallel: cfg.maxCallsInParallel,
      remote_campaign_id: null,
      config_json: JSON.stringify(cfg),
      config_file: cfg.file,
      problem: row.problem ?? null,
      created_at: now,
      updated_at: now,
      completed_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

let phoneSeq = 0;

/** Inserts `count` leads in `state`, updated at `updatedAt`; returns their ids. */
export async function insertLeads(db: Kysely<Database>, campaignId: number, state: LeadState, count: number, updatedAt = 0): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const phone = `+4915100${String(++phoneSeq).padStart(6, '0')}`;
    const r = await db
      .insertInto('leads')
      .values({ campaign_id: campaignId, dedupe_key: phone, phone_number: phone, timezone: null, state, state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, created_at: 0, updated_at: updatedAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(r.id);
  }
  return ids;
}

/** Inserts one attempt for a lead. */
export async function insertAttempt(db: Kysely<Database>, a: { campaignId: number; leadId: number; state: AttemptState; createdAt: number; phone?: string }): Promise<void> {
  const lead = await db.selectFrom('leads').select('phone_number').where('id', '=', a.leadId).executeTakeFirstOrThrow();
  const row: NewAttempt = {
    campaign_id: a.campaignId,
    lead_id: a.leadId,
    contact_position: 0,
    phone_number: a.phone ?? lead.phone_number,
    assistant_id: 12,
    state: a.state,
    call_id: null,
    call_status: null,
    answered_by: null,
    outcome: null,
    detail: null,
    outcome_source: null,
    created_at: a.createdAt,
    sent_at: a.createdAt,
    answered_at: null,
    ended_at: null,
    settle_deadline: null,
    owner: null,
  };
  await db.insertInto('attempts').values(row).execute();
}

/** Inserts (or replaces) the daemon row. */
export async function upsertDaemon(
  db: Kysely<Database>,
  d: { instance: string; pid: number; hostname: string; heartbeatAt: number; stoppedAt?: number | null; api?: 'ok' | 'token-rejected' | 'unreachable' | 'unknown'; apiDetail?: string | null; problems?: unknown[]; maxCalls?: number | null },
): Promise<void> {
  await db.deleteFrom('daemons').where('instance_id', '=', d.instance).execute();
  await db
    .insertInto('daemons')
    .values({
      instance_id: d.instance,
      pid: d.pid,
      hostname: d.hostname,
      version: '0.1.0',
      started_at: d.heartbeatAt - 60_000,
      heartbeat_at: d.heartbeatAt,
      stopped_at: d.stoppedAt ?? null,
      api_status: d.api ?? 'ok',
      api_detail: d.apiDetail ?? null,
      problems_json: d.problems ? JSON.stringify(d.problems) : null,
      max_calls_in_parallel: d.maxCalls ?? null,
    })
    .execute();
}

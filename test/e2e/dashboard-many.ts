// 100 campaigns for the dashboard's overview, shared by its browser test and the
// screenshot script: a real SQLite store (migrated, rows written the way the daemon
// writes them) served by the daemon's own HTTP server and dashboard routes, with a token,
// at a fixed instant. Campaigns in several zones and calling hours, some paused, stopped
// or completed, a few with a problem, with live calls, finished leads and a finish pace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { CampaignState, Database, LeadState, NewAttempt } from '../../src/store/types.js';
import { startDashboardServer } from '../helpers/dashboard-server.js';
import { campaignConfig, createStore, insertCampaign, upsertDaemon } from '../integration/status-fixture.js';

export const MANY_TOKEN = 'dash-many-3f9a-DO-NOT-LOG';
/** Thursday 26 November 2026, 14:00 UTC. */
export const MANY_NOW = Date.UTC(2026, 10, 26, 14, 0, 0);

const ZONES = ['America/New_York', 'Europe/Berlin', 'America/Los_Angeles', 'Europe/London', 'Asia/Tokyo', 'Australia/Sydney', 'America/Sao_Paulo'];
const WORDS = ['spring-renewals', 'winback', 'nps-survey', 'upsell', 'onboarding', 'reminders', 'churn-save', 'feedback', 'event-invite', 'payment-due'];

export interface ManyCampaign {
  name: string;
  state: CampaignState;
  zone: string;
  problem: string | null;
}

/** The 100 campaigns: name, state, zone and problem of each (i from 0). */
export function manyCampaigns(): ManyCampaign[] {
  return Array.from({ length: 100 }, (_, i) => ({
    name: `${WORDS[i % WORDS.length]}-${String(Math.floor(i / WORDS.length) + 1).padStart(2, '0')}`,
    state: (i % 9 === 4 ? 'paused' : i % 23 === 11 ? 'stopped' : i % 17 === 16 ? 'completed' : 'running') as CampaignState,
    zone: ZONES[i % ZONES.length]!,
    problem: i % 19 === 7 ? `assistant ${400 + i} not found: check assistant_id in the campaign file` : null,
  }));
}

async function fill(db: Kysely<Database>): Promise<void> {
  await upsertDaemon(db, { instance: 'many', pid: 4242, hostname: 'dialer-1', heartbeatAt: MANY_NOW - 1000 });
  let phone = 0;
  const campaigns = manyCampaigns();
  for (const [i, c] of campaigns.entries()) {
    // Calling hours differ, so that some windows are open and some closed right now.
    const start = 8 + (i % 4);
    const id = await insertCampaign(db, campaignConfig(c.name, { timezone: c.zone, allowedDays: [1, 2, 3, 4, 5, 6], allowedHoursStart: start * 3600, allowedHoursEnd: Math.min(23, start + 8 + (i % 3) * 4) * 3600, maxCallsInParallel: 2 + (i % 4) * 2 }), { state: c.state, problem: c.problem, now: MANY_NOW - 86_400_000 });
    const total = 40 + ((i * 37) % 160);
    const done = c.state === 'completed' ? total : Math.floor((total * ((i * 53) % 100)) / 100);
    const live = c.state === 'running' && !c.problem ? i % 4 : 0;
    const states: LeadState[] = Array.from({ length: total }, (_, k) =>
      k < done ? (k % 5 === 0 ? 'reached-max-retries' : k % 11 === 0 ? 'invalid' : 'completed') : k < done + live ? 'calling' : k % 7 === 0 ? 'retry-scheduled' : 'pending',
    );
    const leads = await db
      .insertInto('leads')
      .values(
        states.map((state, k) => {
          const number = `+1555${String(3_000_000 + ++phone).padStart(7, '0')}`;
          // The last dozen finished leads ended within the hour: the campaign's pace.
          const recent = k < done && k >= done - 12 && c.state === 'running';
          return { campaign_id: id, dedupe_key: number, phone_number: number, timezone: null, state, state_reason: null, next_due_at: null, remote_lead_id: null, source_file: null, source_line: null, created_at: MANY_NOW - 86_400_000, updated_at: recent ? MANY_NOW - 20 * 60_000 : MANY_NOW - 5 * 3_600_000 };
        }),
      )
      .returning(['id', 'state', 'phone_number', 'updated_at'])
      .execute();
    const attempts: NewAttempt[] = leads
      .filter((l) => l.state !== 'pending')
      .map((l) => {
        const calling = l.state === 'calling';
        const at = calling ? MANY_NOW - 30_000 : Number(l.updated_at) - 90_000;
        return { campaign_id: id, lead_id: l.id, contact_position: 0, phone_number: l.phone_number, assistant_id: 12, state: calling ? 'placed' : 'ended', call_id: null, call_status: null, answered_by: null, outcome: null, detail: null, outcome_source: null, created_at: at, sent_at: at, answered_at: null, ended_at: calling ? null : at + 60_000, settle_deadline: null, owner: null };
      });
    for (let k = 0; k < attempts.length; k += 200) await db.insertInto('attempts').values(attempts.slice(k, k + 200)).execute();
  }
}

export interface ManyDashboard {
  url: string;
  close(): Promise<void>;
}

/** The store of 100 campaigns in a temp folder, served on loopback. */
export async function startManyDashboard(): Promise<ManyDashboard> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-dash-many-'));
  const store = await createStore(path.join(dir, 'campaignd.db'));
  await fill(store.db);
  const clock = { now: () => MANY_NOW, sleep: async () => {}, setTimer: () => () => {} };
  const server = await startDashboardServer({ db: store.db, clock, token: MANY_TOKEN, version: '1.4.0', hostname: 'dialer-1' });
  return {
    url: server.url,
    async close() {
      await server.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

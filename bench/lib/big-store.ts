// Builds a large campaignd database file fast: the real schema (migrateToLatest), then
// raw prepared INSERTs in transactions of 50,000 rows. Leads are spread over campaigns
// and states the way a long-running deployment looks: mostly pending (overdue by up to
// a day), some waiting for a retry, some final, with one ended attempt per called lead.
import SqliteDatabase from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { benchCampaign, benchPhone } from './engine-stack.js';

export interface BigStoreSummary {
  leads: number;
  attempts: number;
  campaigns: number;
}

/** The name of the c-th campaign (1-based) of a big store. */
export function bigStoreCampaignName(c: number): string {
  return `campaign-${String(c).padStart(3, '0')}`;
}

/** The phone numbers of the c-th campaign (1-based), in insertion order: lead i belongs to campaign (i % campaigns) + 1. */
export function bigStoreCampaignPhones(c: number, leads: number, campaigns: number): string[] {
  const phones: string[] = [];
  for (let i = c - 1; i < leads; i += campaigns) phones.push(benchPhone(i));
  return phones;
}

/**
 * A new database `file` with the real schema, opened raw for bulk INSERTs: no fsync (a
 * benchmark's store is rebuilt, never recovered). The caller closes it.
 */
export async function openForBulkLoad(file: string, now: number): Promise<SqliteDatabase.Database> {
  const setup = openDatabase(file);
  await migrateToLatest(setup.db, { clock: { now: () => now } });
  await setup.close();
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = OFF');
  return raw;
}

/** Fills `file` (which must not exist) with `leads` leads over `campaigns` campaigns. */
export async function buildBigStore(file: string, leads: number, campaigns: number, now: number): Promise<BigStoreSummary> {
  const raw = await openForBulkLoad(file, now);
  const insertCampaign = raw.prepare(
    `insert into campaigns (name, state, assistant_id, timezone, max_calls_in_parallel, config_json, created_at, updated_at)
     values (?, 'running', 1, 'UTC', 10, ?, ?, ?)`,
  );
  const insertLead = raw.prepare(
    `insert into leads (campaign_id, dedupe_key, phone_number, state, next_due_at, contact_attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertAttempt = raw.prepare(
    `insert into attempts (campaign_id, lead_id, contact_position, phone_number, assistant_id, state, outcome, outcome_source, created_at, sent_at, ended_at)
     values (?, ?, 0, ?, 1, 'ended', ?, 'webhook', ?, ?, ?)`,
  );
  raw.transaction(() => {
    for (let c = 1; c <= campaigns; c++) {
      const name = bigStoreCampaignName(c);
      insertCampaign.run(name, JSON.stringify(benchCampaign(name, 1)), now - 86_400_000, now - 86_400_000);
    }
  })();
  let attempts = 0;
  const batch = raw.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const campaign = (i % campaigns) + 1;
      const phone = benchPhone(i);
      // A multiplicative hash, so that state and age do not follow the campaign (i % campaigns).
      const h = Math.imul(i + 1, 2_654_435_761) >>> 0;
      const kind = h % 10; // 0–6 pending, 7 retry-scheduled, 8 completed, 9 reached-max-retries
      const age = (h >>> 4) % 86_400_000;
      const state = kind <= 6 ? 'pending' : kind === 7 ? 'retry-scheduled' : kind === 8 ? 'completed' : 'reached-max-retries';
      const called = kind >= 7;
      // Half the retries are due already, half wait up to an hour.
      const due = kind <= 6 ? now - age : kind === 7 ? now + ((i % 2 === 0 ? -1 : 1) * (age % 3_600_000)) : null;
      const lead = insertLead.run(campaign, phone, phone, state, due, called ? 1 : 0, now - 86_400_000, now - age).lastInsertRowid;
      if (called) {
        const start = now - age - 120_000;
        insertAttempt.run(campaign, lead, phone, kind === 8 ? 'success' : 'no-answer', start, start, start + 60_000);
        attempts++;
      }
    }
  });
  for (let from = 0; from < leads; from += 50_000) batch(from, Math.min(leads, from + 50_000));
  raw.pragma('wal_checkpoint(TRUNCATE)');
  raw.close();
  return { leads, attempts, campaigns };
}

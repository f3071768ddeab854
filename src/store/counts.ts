import type { Kysely } from 'kysely';
import { hasMigration } from './migrate.js';
import type { Database, LeadState } from './types.js';

// Per-campaign lead counts by state and attempt totals, for `status`. Since migration
// 0002 the database keeps them itself (lead_counts and attempt_counts, maintained by
// triggers), so reading them costs the same at a thousand leads as at a million. A
// database still at 0001 (an older daemon runs on it and has not migrated it; status
// opens it read-only and cannot) is counted row by row instead, with the same result.

/** The migration that creates the counter tables and their triggers. */
export const COUNTS_MIGRATION = '0002_status_counts';

/** What status shows of a campaign's size. */
export interface CampaignCounts {
  /** Leads by state; a state without leads may be missing. */
  leads: Partial<Record<LeadState, number>>;
  /** Every attempt of the campaign, whatever its state. */
  attempts: number;
}

/** Lead counts by state and attempt totals of every campaign (or of one); campaigns without leads or attempts may be missing. */
export async function campaignCounts(db: Kysely<Database>, campaignId?: number): Promise<Map<number, CampaignCounts>> {
  const kept = await hasMigration(db, COUNTS_MIGRATION);
  const byCampaign = new Map<number, CampaignCounts>();
  const entry = (id: number): CampaignCounts => {
    let counts = byCampaign.get(id);
    if (!counts) byCampaign.set(id, (counts = { leads: {}, attempts: 0 }));
    return counts;
  };
  for (const r of await (kept ? keptLeadCounts(db, campaignId) : countLeads(db, campaignId))) {
    const counts = entry(r.campaign_id);
    counts.leads[r.state] = (counts.leads[r.state] ?? 0) + Number(r.n);
  }
  for (const r of await (kept ? keptAttemptCounts(db, campaignId) : countAttempts(db, campaignId))) entry(r.campaign_id).attempts += Number(r.n);
  return byCampaign;
}

interface LeadCountRow {
  campaign_id: number;
  state: LeadState;
  n: number;
}

interface AttemptCountRow {
  campaign_id: number;
  n: number;
}

/** On PostgreSQL a state's count is kept in up to 8 rows, one per writing connection (migration 0037): their sum. */
function keptLeadCounts(db: Kysely<Database>, campaignId: number | undefined): Promise<LeadCountRow[]> {
  let query = db
    .selectFrom('lead_counts')
    .select(['campaign_id', 'state', (eb) => eb.fn.sum<number>('n').as('n')])
    .groupBy(['campaign_id', 'state']);
  if (campaignId !== undefined) query = query.where('campaign_id', '=', campaignId);
  return query.execute();
}

function keptAttemptCounts(db: Kysely<Database>, campaignId: number | undefined): Promise<AttemptCountRow[]> {
  let query = db.selectFrom('attempt_counts').select(['campaign_id', 'n']);
  if (campaignId !== undefined) query = query.where('campaign_id', '=', campaignId);
  return query.execute();
}

/** Before 0002: a walk of the (campaign_id, state) index. */
function countLeads(db: Kysely<Database>, campaignId: number | undefined): Promise<LeadCountRow[]> {
  let query = db
    .selectFrom('leads')
    .select(['campaign_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['campaign_id', 'state']);
  if (campaignId !== undefined) query = query.where('campaign_id', '=', campaignId);
  return query.execute();
}

/** Before 0002: a walk of the (campaign_id, created_at) index. */
function countAttempts(db: Kysely<Database>, campaignId: number | undefined): Promise<AttemptCountRow[]> {
  let query = db
    .selectFrom('attempts')
    .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('campaign_id');
  if (campaignId !== undefined) query = query.where('campaign_id', '=', campaignId);
  return query.execute();
}

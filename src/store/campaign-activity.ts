import { sql, type Kysely } from 'kysely';
import { FINISHED_LEAD_STATES_SQL, LIVE_ATTEMPT_STATES_SQL } from './state-lists.js';
import type { Database } from './types.js';

// What `status` reads of a campaign's recent activity: live calls, attempts since a time,
// the first attempt of a stretch, leads finished lately; and the dashboard's attempts by hour.

/** Live calls per campaign (or of one), through the partial index on live attempts. */
export async function liveCallsByCampaign(db: Kysely<Database>, campaignId?: number): Promise<Map<number, number>> {
  let query = db
    .selectFrom('attempts')
    // Literals, not bound parameters: SQLite uses a partial index only when it can prove
    // the query's WHERE implies the index's, which it cannot do through `?` (a full scan
    // of 600k attempts took 440 ms; through the index it is instant).
    .where('state', 'in', LIVE_ATTEMPT_STATES_SQL)
    .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('campaign_id');
  if (campaignId !== undefined) query = query.where('campaign_id', '=', campaignId);
  return new Map((await query.execute()).map((r) => [r.campaign_id, Number(r.n)]));
}

/** Each campaign's recent activity, as `status` reads it, by campaign id (a campaign without any is missing). */
export interface CampaignActivity {
  /** Attempts of the campaign created at or after its own `since`. */
  attemptsSince: Map<number, number>;
  /** Its leads finished in the window (see FinishedWindow). */
  finishedLeads: Map<number, number>;
  /** When its first attempt at or after `firstSince` was created. */
  firstAttempt: Map<number, number>;
}

/**
 * The activity of these campaigns: each figure asked once for all of them, index ranges of
 * each campaign in one grouped statement, on both databases. Asked per campaign it was 300
 * statements for 100 campaigns: on PostgreSQL 340 of the 390 ms of a report at 1M leads
 * (round trips), on SQLite most of a small store's report (each statement built by kysely).
 */
export async function campaignActivity(
  db: Kysely<Database>,
  campaigns: readonly { campaignId: number; since: number }[],
  window: { firstSince: number; finished: FinishedWindow },
): Promise<CampaignActivity> {
  const ids = [...new Set(campaigns.map((c) => c.campaignId))];
  if (ids.length === 0) return { attemptsSince: new Map(), finishedLeads: new Map(), firstAttempt: new Map() };
  return {
    attemptsSince: await attemptsSinceEach(db, campaigns),
    firstAttempt: await firstAttemptSinceByCampaign(db, ids, window.firstSince),
    finishedLeads: await finishedLeadsByCampaign(db, ids, window.finished),
  };
}

/**
 * Attempts of each campaign created at or after its own `since`: one statement per distinct
 * `since` (campaigns of one zone share their midnight), a range of the (campaign_id,
 * created_at) index per campaign.
 */
async function attemptsSinceEach(db: Kysely<Database>, ranges: readonly { campaignId: number; since: number }[]): Promise<Map<number, number>> {
  const bySince = new Map<number, number[]>();
  for (const r of ranges) bySince.set(r.since, [...(bySince.get(r.since) ?? []), r.campaignId]);
  const out = new Map<number, number>();
  for (const [since, ids] of bySince) {
    const rows = await db
      .selectFrom('attempts')
      .where('campaign_id', 'in', ids)
      .where('created_at', '>=', since)
      .select(['campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('campaign_id')
      .execute();
    for (const r of rows) out.set(Number(r.campaign_id), Number(r.n));
  }
  return out;
}

/** When each campaign's first attempt at or after `since` was created. */
async function firstAttemptSinceByCampaign(db: Kysely<Database>, ids: number[], since: number): Promise<Map<number, number>> {
  const first = await db
    .selectFrom('attempts')
    .where('campaign_id', 'in', ids)
    .where('created_at', '>=', since)
    .select(['campaign_id', (eb) => eb.fn.min<number>('created_at').as('first')])
    .groupBy('campaign_id')
    .execute();
  return new Map(first.filter((r) => r.first != null).map((r) => [Number(r.campaign_id), Number(r.first)]));
}

/** Which finished leads count: finished at or after `finishedSince`, with an attempt created at or after `attemptedSince`. */
export interface FinishedWindow {
  finishedSince: number;
  attemptedSince: number;
}

/**
 * Leads of each campaign that reached completed / reached-max-retries lately and have a
 * recent attempt. Driven by the leads_finished partial index (each campaign's leads
 * finished since `finishedSince`) with one probe of attempts_lead each: a join from the
 * campaign's recent attempts read every attempt of three hours and its lead (~2 ms per
 * campaign at 1M leads). The attempt is not filtered by campaign: an attempt belongs to its
 * lead's campaign (the claim takes the lead from that campaign), and a campaign_id there
 * would lead SQLite without statistics to the (campaign_id, created_at) index, a walk of
 * every recent attempt per lead.
 */
async function finishedLeadsByCampaign(db: Kysely<Database>, ids: number[], window: FinishedWindow): Promise<Map<number, number>> {
  const rows = await finishedIn(db, window)
    .where('l.campaign_id', 'in', ids)
    .select(['l.campaign_id', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('l.campaign_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.campaign_id), Number(r.n)]));
}

function finishedIn(db: Kysely<Database>, window: FinishedWindow) {
  return db
    .selectFrom('leads as l')
    .where('l.state', 'in', FINISHED_LEAD_STATES_SQL)
    .where('l.updated_at', '>=', window.finishedSince)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('attempts as a')
          .select('a.id')
          .whereRef('a.lead_id', '=', 'l.id')
          .where('a.created_at', '>=', window.attemptedSince),
      ),
    );
}

/** Attempts of one campaign created at or after `start`, by the start of their `hourMs`-long slice (from `start`). */
export async function attemptsByHour(db: Kysely<Database>, campaignId: number, start: number, hourMs: number): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('attempts')
    .where('campaign_id', '=', campaignId)
    .where('created_at', '>=', start)
    .select([sql<number>`cast((created_at - ${start}) / ${hourMs} as integer)`.as('h'), (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('h')
    .execute();
  return new Map(rows.map((r) => [start + Number(r.h) * hourMs, Number(r.n)]));
}

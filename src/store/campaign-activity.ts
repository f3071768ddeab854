import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
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

/** Each campaign's recent activity, as `status` reads it. */
export interface CampaignActivity {
  /** Attempts of the campaign created at or after its own `since`. */
  attemptsSince(campaignId: number): Promise<number>;
  /** Its leads finished in the window (finishedLeads). */
  finishedLeads(campaignId: number): Promise<number>;
  /** When its first attempt at or after `firstSince` was created; null: none. */
  firstAttempt(campaignId: number): Promise<number | null>;
}

/**
 * The activity of these campaigns. PostgreSQL: a round trip costs more than these small
 * queries, so with several campaigns each figure is asked once for all of them, three
 * queries in all (300 round trips were 340 of the 390 ms of a report of 100 campaigns at 1M
 * leads; 140 ms after). SQLite runs them in-process: per campaign, when asked, as tuned for
 * its planner.
 */
export async function campaignActivity(
  db: Kysely<Database>,
  campaigns: readonly { campaignId: number; since: number }[],
  window: { firstSince: number; finished: FinishedWindow },
): Promise<CampaignActivity> {
  if (isPostgres(db) && campaigns.length > 1) {
    const sinceBy = await attemptsSinceEach(db, campaigns);
    const firstBy = await firstAttemptSinceByCampaign(db, window.firstSince);
    const finishedBy = await finishedLeadsByCampaign(db, window.finished);
    return {
      attemptsSince: async (id) => sinceBy.get(id) ?? 0,
      finishedLeads: async (id) => finishedBy.get(id) ?? 0,
      firstAttempt: async (id) => firstBy.get(id) ?? null,
    };
  }
  const since = new Map(campaigns.map((c) => [c.campaignId, c.since]));
  return {
    attemptsSince: (id) => attemptsSince(db, id, since.get(id) ?? 0),
    finishedLeads: (id) => finishedLeads(db, id, window.finished),
    firstAttempt: (id) => firstAttemptSince(db, id, window.firstSince),
  };
}

/** Attempts of a campaign created at or after `since`: a range of the (campaign_id, created_at) index. */
async function attemptsSince(db: Kysely<Database>, campaignId: number, since: number): Promise<number> {
  const r = await db
    .selectFrom('attempts')
    .where('campaign_id', '=', campaignId)
    .where('created_at', '>=', since)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/**
 * Attempts of each campaign created at or after its own `since`, in one statement
 * (PostgreSQL only: one index range per campaign, ~15 ms for 100 campaigns at 1M leads;
 * the same ranges per campaign in one statement took longer).
 */
async function attemptsSinceEach(db: Kysely<Database>, ranges: readonly { campaignId: number; since: number }[]): Promise<Map<number, number>> {
  const values = ranges.map((r) => sql`(${r.campaignId}::bigint, ${r.since}::bigint)`);
  const today = await sql<{ campaign_id: number; n: number }>`
    select v.campaign_id, (select count(*) from attempts a where a.campaign_id = v.campaign_id and a.created_at >= v.since) as n
    from (values ${sql.join(values)}) as v(campaign_id, since)`.execute(db);
  return new Map(today.rows.map((r) => [Number(r.campaign_id), Number(r.n)]));
}

/** When the campaign's first attempt at or after `since` was created; null: none. */
async function firstAttemptSince(db: Kysely<Database>, campaignId: number, since: number): Promise<number | null> {
  const r = await db
    .selectFrom('attempts')
    .where('campaign_id', '=', campaignId)
    .where('created_at', '>=', since)
    .select((eb) => eb.fn.min<number>('created_at').as('first'))
    .executeTakeFirst();
  return r?.first == null ? null : Number(r.first);
}

/** firstAttemptSince for every campaign that has one. */
async function firstAttemptSinceByCampaign(db: Kysely<Database>, since: number): Promise<Map<number, number>> {
  const first = await db
    .selectFrom('attempts')
    .where('created_at', '>=', since)
    .select(['campaign_id', (eb) => eb.fn.min<number>('created_at').as('first')])
    .groupBy('campaign_id')
    .execute();
  return new Map(first.map((r) => [Number(r.campaign_id), Number(r.first)]));
}

/** Which finished leads count: finished at or after `finishedSince`, with an attempt created at or after `attemptedSince`. */
export interface FinishedWindow {
  finishedSince: number;
  attemptedSince: number;
}

/**
 * Leads of a campaign that reached completed / reached-max-retries lately and have a recent
 * attempt. Driven by the leads_finished partial index (the leads finished since
 * `finishedSince`) with one probe of attempts_lead each: a join from the campaign's recent
 * attempts read every attempt of three hours and its lead (~2 ms per campaign at 1M
 * leads). The attempt is not filtered by campaign: an attempt belongs to its lead's
 * campaign (the claim takes the lead from that campaign), and a campaign_id there would
 * lead SQLite without statistics to the (campaign_id, created_at) index, a walk of every
 * recent attempt per lead.
 */
async function finishedLeads(db: Kysely<Database>, campaignId: number, window: FinishedWindow): Promise<number> {
  const r = await finishedIn(db, window)
    .where('l.campaign_id', '=', campaignId)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** finishedLeads for every campaign that has some: one grouped scan (~50-100 ms at 1M leads). */
async function finishedLeadsByCampaign(db: Kysely<Database>, window: FinishedWindow): Promise<Map<number, number>> {
  const rows = await finishedIn(db, window)
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

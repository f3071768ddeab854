import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './types.js';

// PostgreSQL plans each query by the statistics ANALYZE last gathered; SQLite plans by its
// indexes alone, so all of this does nothing there. Autovacuum gathers them again only
// after a tenth of a table changed and its next round (a minute or more), and leads do not
// arrive evenly: a campaign that grows from nothing to 20,000 leads is, until then, a
// campaign of one lead to the planner. Its duplicate lookup by (campaign, dedupe key) then
// walked the campaign's (campaign, state) index and filtered every lead of the campaign:
// 5–10 ms a lookup instead of 0.05, the largest cost of a single-lead POST under load
// (bench/RESULTS.md, "The duplicate lookup's plan").

/**
 * After a bulk load: fresh planner statistics for the tables it filled. Until then the
 * planner takes a table of a million fresh rows for an empty one and scans it whole for each
 * lookup (a re-import right after an import ran at a third of its rate, the engine's claims likewise).
 */
export async function refreshStatistics(db: Kysely<Database>, tables: readonly (keyof Database & string)[]): Promise<void> {
  if (!isPostgres(db) || tables.length === 0) return;
  await sql`analyze ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db);
}

/** Leads posted into a campaign before its first refresh (a file import of as many refreshes at its end). */
export const REFRESH_AFTER_ROWS = 5_000;

/**
 * What posted leads change of the planner's picture: how leads spread over campaigns and
 * states. The other columns are keys, whose statistics (a share of the rows) stay true as
 * the table grows. From a sample of 9,000 rows (statistics target 30, not the default 100's
 * 30,000): the 30 largest campaigns each and the rest as their average is all a plan
 * needs, and it runs beside the next requests (at 300,000 leads 27 ms against 66–173 ms; the
 * larger sample made a 10,000-lead POST running beside it 40–50 % slower).
 * Autovacuum's own ANALYZE later brings the full sample back.
 */
async function refreshPostedLeads(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`set local default_statistics_target = 30`.execute(trx);
    await sql`analyze leads (campaign_id, state)`.execute(trx);
  });
}

export interface StatisticsRefresher {
  /** Counts leads stored into a campaign; refreshes the statistics in the background when they are due. */
  rowsWritten(campaignId: number, count: number): void;
  /** The refresh in flight, if any, finished (before the store closes). */
  settled(): Promise<void>;
}

/**
 * For leads that arrive a request at a time (the API). A campaign's refresh is due once it
 * got REFRESH_AFTER_ROWS posted leads, then each time its posted leads doubled since the last
 * refresh: a plan goes wrong when the planner is off by orders of magnitude, not by half, and
 * each ANALYZE costs the requests beside it. The request that makes it due does not wait
 * for it; one runs at a time; its failure goes to `onError`, never to a request.
 */
export function statisticsRefresher(db: Kysely<Database>, onError: (err: unknown) => void, firstAfter = REFRESH_AFTER_ROWS): StatisticsRefresher {
  /** Per campaign: leads posted that the last refresh saw, and posted after it. */
  const campaigns = new Map<number, { seen: number; since: number }>();
  let running: Promise<void> | null = null;
  let dueAgain = false;
  const start = (): void => {
    dueAgain = false;
    for (const c of campaigns.values()) {
      c.seen += c.since;
      c.since = 0;
    }
    running = refreshPostedLeads(db)
      .then(() => undefined, onError)
      .finally(() => {
        running = null;
        if (dueAgain) start();
      });
  };
  return {
    rowsWritten(campaignId, count) {
      if (!isPostgres(db) || count <= 0) return;
      let c = campaigns.get(campaignId);
      if (!c) campaigns.set(campaignId, (c = { seen: 0, since: 0 }));
      c.since += count;
      if (c.since < Math.max(firstAfter, c.seen)) return;
      if (running) dueAgain = true;
      else start();
    },
    async settled() {
      while (running !== null) await running;
    },
  };
}

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

/** Rows written between two refreshes by the API's posts (a file import of as many refreshes at its end). */
export const REFRESH_AFTER_ROWS = 5_000;

export interface StatisticsRefresher {
  /** Counts rows written to the tables; each REFRESH_AFTER_ROWS, refreshes their statistics in the background. */
  rowsWritten(count: number): void;
  /** The refresh in flight, if any, finished (before the store closes). */
  settled(): Promise<void>;
}

/**
 * For leads that arrive a request at a time (the API): the request that crosses the mark
 * does not wait for the refresh (ANALYZE samples 30,000 rows: tens of milliseconds, more on
 * a large table), one runs at a time, and rows written meanwhile count towards the next.
 */
export function statisticsRefresher(
  db: Kysely<Database>,
  tables: readonly (keyof Database & string)[],
  onError: (err: unknown) => void,
  everyRows = REFRESH_AFTER_ROWS,
): StatisticsRefresher {
  let pending = 0;
  let running: Promise<void> | null = null;
  const start = (): void => {
    pending = 0;
    running = refreshStatistics(db, tables)
      .catch(onError)
      .finally(() => {
        running = null;
        if (pending >= everyRows) start();
      });
  };
  return {
    rowsWritten(count) {
      if (!isPostgres(db) || count <= 0) return;
      pending += count;
      if (pending >= everyRows && running === null) start();
    },
    async settled() {
      while (running !== null) await running;
    },
  };
}

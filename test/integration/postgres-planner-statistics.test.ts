// PostgreSQL plans a query by the statistics ANALYZE last gathered. A campaign that grew by
// API posts from nothing to thousands of leads was, until autovacuum's next round, a
// campaign of one lead to the planner: its duplicate lookup walked the campaign's
// (campaign, state) index and filtered every lead of it (src/store/planner-statistics.ts).
// The API counts what its posts store per campaign (the daemon doing so:
// test/e2e/postgres-api-statistics.test.ts) and refreshes the statistics when a
// campaign got REFRESH_AFTER_ROWS leads, then each time its posted leads doubled.
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { postLeads } from '../../src/leads/post-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { refreshStatistics, statisticsRefresher } from '../../src/store/planner-statistics.js';
import { openPostgres } from '../../src/store/postgres.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { createTestDatabase } from '../helpers/test-store.js';

let handle: DatabaseHandle;
let database: { url: string; drop(): Promise<void> };

beforeEach(async () => {
  database = await createTestDatabase();
  handle = openPostgres(database.url, { maxConnections: 2 });
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
});
afterEach(async () => {
  await handle.close();
  await database.drop();
});

let phone = 0;
async function post(campaignId: number, n: number): Promise<void> {
  const items = Array.from({ length: n }, () => ({ phone_number: `+1415${String(3_000_000 + ++phone)}` }));
  await postLeads(handle.db, { id: campaignId, allowDuplicates: false }, items, { now: 1, announce: false, answer: (outcomes) => ({ status: 200, body: outcomes }) });
}

/** The plan of the POST's duplicate lookup for one number of the campaign. */
async function lookupPlan(campaignId: number): Promise<string> {
  const rows = await sql<{ 'QUERY PLAN': string }>`explain select id from leads where campaign_id = ${sql.lit(campaignId)} and dedupe_key = any(array['+14150000000'])`.execute(handle.db);
  return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
}

it('a campaign grown by posts keeps its duplicate lookup on the (campaign, dedupe key) index once the refresher ran', async () => {
  const first = (await upsertCampaign(handle.db, testCampaignConfig('first'), { timezone: 'UTC' }, 1)).id;
  const grown = (await upsertCampaign(handle.db, testCampaignConfig('grown'), { timezone: 'UTC' }, 1)).id;
  await post(first, 2_000);
  await refreshStatistics(handle.db, ['leads']); // the planner knows the first campaign, and no lead of the second
  await post(grown, 6_000);
  // What autovacuum leaves until its next round: the second campaign taken for an empty one.
  expect(await lookupPlan(grown)).toContain('leads_campaign_state');

  const errors: unknown[] = [];
  const refresher = statisticsRefresher(handle.db, (err) => errors.push(err), 5_000);
  refresher.rowsWritten(grown, 4_999);
  refresher.rowsWritten(first, 4_999);
  await refresher.settled();
  expect(await lookupPlan(grown)).toContain('leads_campaign_state'); // not yet: below the mark
  refresher.rowsWritten(grown, 1);
  await refresher.settled();
  expect(await lookupPlan(grown)).toContain('leads_campaign_dedupe');
  expect(errors).toEqual([]);
});

it("runs one refresh at a time, then again once a campaign's posted leads doubled; a failure goes to onError, not to the caller", async () => {
  const errors: unknown[] = [];
  // A refresh that fails (here: no table to analyze) is reported, and the next one runs.
  await sql`alter table leads rename to leads_away`.execute(handle.db);
  const refresher = statisticsRefresher(handle.db, (err) => errors.push(err), 10);
  refresher.rowsWritten(1, 10);
  await refresher.settled();
  expect(String(errors[0])).toMatch(/leads/);
  await sql`alter table leads_away rename to leads`.execute(handle.db);

  // ANALYZE counts itself in the shared statistics at once (not at the session's next flush).
  const counts = async () => Number((await sql<{ n: string }>`select analyze_count + autoanalyze_count as n from pg_stat_user_tables where relname = 'leads'`.execute(handle.db)).rows[0]!.n);
  const before = await counts();
  refresher.rowsWritten(1, 10); // 20 posted, 10 seen by the last refresh: starts one
  refresher.rowsWritten(1, 25); // one is running: due again after it (45 posted, 20 seen)
  await refresher.settled();
  expect((await counts()) - before).toBe(2);
  refresher.rowsWritten(1, 44); // 89 posted, 45 seen: not doubled
  refresher.rowsWritten(2, 9); // another campaign, under the first mark
  await refresher.settled();
  expect((await counts()) - before).toBe(2);
  refresher.rowsWritten(1, 1); // doubled
  await refresher.settled();
  expect((await counts()) - before).toBe(3);
  expect(errors).toHaveLength(1);
});

// What the API's two commonest requests ask of PostgreSQL, counted on the real driver: each
// statement is an exchange with the server and a wake-up of its process, and on a host where
// the daemon and PostgreSQL share the cores each wake-up can take the daemon's thread off its
// core (bench/RESULTS.md, issue 23). A lead's view is one statement; a POST of a few leads
// writes them by one INSERT, never COPY's three exchanges, which stay for bulk batches; a
// POST with an Idempotency-Key claims it by one upsert and sweeps old answers rarely.
import pg from 'pg';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { postLeads } from '../../src/leads/post-leads.js';
import { upsertCampaign } from '../../src/store/campaigns.js';
import type { DatabaseHandle } from '../../src/store/database.js';
import { leadView } from '../../src/store/lead-view.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openPostgres } from '../../src/store/postgres.js';
import { testCampaignConfig } from '../helpers/campaign-config.js';
import { createTestDatabase } from '../helpers/test-store.js';

let handle: DatabaseHandle;
let database: { url: string; drop(): Promise<void> };
let campaignId: number;

beforeEach(async () => {
  database = await createTestDatabase();
  handle = openPostgres(database.url, { maxConnections: 4 });
  await migrateToLatest(handle.db, { clock: { now: () => 0 } });
  campaignId = (await upsertCampaign(handle.db, testCampaignConfig('exchanges'), { timezone: 'UTC' }, 1)).id;
});
afterEach(async () => {
  vi.restoreAllMocks();
  await handle.close();
  await database.drop();
});

/** The statements the driver sends while `fn` runs (the calls pass through to the server). */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const [q] = args as [unknown];
    sent.push(typeof q === 'string' ? q : ((q as { text?: string } | null)?.text ?? 'COPY'));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query);
  await fn();
  vi.restoreAllMocks();
  return sent.map((s) => s.replace(/\s+/g, ' ').trim().toLowerCase());
}

let phone = 0;
const items = (n: number) => Array.from({ length: n }, () => ({ phone_number: `+1415${String(2_000_000 + ++phone)}`, variables: { first_name: `P${phone}` } }));
const post = (n: number) => postLeads(handle.db, { id: campaignId, allowDuplicates: false }, items(n), { now: 1, answer: (outcomes) => ({ status: 200, body: outcomes }) });

it('a POST of one lead, or of 64, writes its leads by one INSERT in one transaction; a bulk POST by COPY', async () => {
  await post(1); // the first request of a pool opens its connection
  const one = await statementsOf(() => post(1));
  expect(one.filter((s) => s.startsWith('copy'))).toEqual([]);
  expect(one.filter((s) => s.startsWith('insert into "leads"'))).toHaveLength(1);
  expect(one[0]).toBe('begin');
  expect(one.at(-1)).toBe('commit');
  expect(one.length).toBeLessThanOrEqual(6);
  const small = await statementsOf(() => post(64));
  expect(small.filter((s) => s.startsWith('insert into "leads"'))).toHaveLength(1);
  expect(small.filter((s) => s.startsWith('copy'))).toEqual([]);
  const bulk = await statementsOf(() => post(65));
  expect(bulk.filter((s) => s.startsWith('copy leads'))).toHaveLength(1);
  // Every lead is in, in the order posted.
  const ids = (await handle.db.selectFrom('leads').select(['id', 'phone_number']).where('campaign_id', '=', campaignId).orderBy('id').execute()).map((r) => r.phone_number);
  expect(ids).toHaveLength(1 + 1 + 64 + 65);
  expect(ids).toEqual([...ids].sort());
});

it('a POST with an Idempotency-Key takes its key in one statement, and expired answers are swept once a minute', async () => {
  const keyed = (key: string, now: number) =>
    postLeads(handle.db, { id: campaignId, allowDuplicates: false }, items(1), { now, idempotency: { owner: '', key, requestHash: key }, answer: (outcomes) => ({ status: 200, body: outcomes }) });
  await keyed('first', 1_000);
  const second = await statementsOf(() => keyed('second', 2_000));
  expect(second.filter((s) => s.startsWith('delete'))).toEqual([]);
  expect(second.filter((s) => s.startsWith('insert into "api_idempotency"'))).toHaveLength(1);
  // Its answer looked for, then begin, the key, the lookups, the lead, the wake-up, the answer kept, commit.
  expect(second.length).toBeLessThanOrEqual(9);
  const later = await statementsOf(() => keyed('third', 62_000));
  expect(later.filter((s) => s.startsWith('delete from "api_idempotency"'))).toHaveLength(1);
  expect(await handle.db.selectFrom('api_idempotency').select('idempotency_key').orderBy('idempotency_key').execute()).toEqual([{ idempotency_key: 'first' }, { idempotency_key: 'second' }, { idempotency_key: 'third' }]);
});

it('a POST tells the engines of its leads (NOTIFY) only when asked: a paused campaign’s POST does not', async () => {
  const told = await statementsOf(() => post(1));
  expect(told.filter((s) => s.startsWith('select pg_notify'))).toHaveLength(1);
  const quiet = await statementsOf(() =>
    postLeads(handle.db, { id: campaignId, allowDuplicates: false }, items(1), { now: 1, announce: false, answer: (outcomes) => ({ status: 200, body: outcomes }) }),
  );
  expect(quiet.filter((s) => s.startsWith('select pg_notify'))).toEqual([]);
  expect(quiet.filter((s) => s.startsWith('insert into "leads"'))).toHaveLength(1);
});

it('a lead’s view is one statement', async () => {
  await post(1);
  const lead = await handle.db.selectFrom('leads').select('id').executeTakeFirstOrThrow();
  await leadView(handle.db, lead.id);
  const sent = await statementsOf(() => leadView(handle.db, lead.id));
  expect(sent).toHaveLength(1);
});

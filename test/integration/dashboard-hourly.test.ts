// The dashboard's attempts-per-hour columns: counts kept for ended hours must always
// equal a fresh count of the store, as time moves on and attempts keep arriving.
import { afterEach, describe, expect, it } from 'vitest';
import { createHourlyCounter, HOUR_MS, HOURS, hoursSince } from '../../src/dashboard/hourly.js';
import { openDatabase, type DatabaseHandle } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { ManualClock } from '../../src/time/clock.js';

let store: DatabaseHandle | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe('attempts per hour (dashboard)', () => {
  it('equals a fresh count at every refresh while hours end, attempts arrive and new campaigns appear', async () => {
    const T = Date.UTC(2026, 5, 1, 12, 30);
    store = openDatabase(':memory:');
    const db = store.db;
    await migrateToLatest(db, { clock: new ManualClock(T) });
    const campaigns: { id: number; lead: number }[] = [];
    const addCampaign = async (name: string): Promise<void> => {
      const c = await db.insertInto('campaigns').values({ name, state: 'running', assistant_id: 1, timezone: 'UTC', max_calls_in_parallel: 1, config_json: '{}', created_at: T, updated_at: T }).returning('id').executeTakeFirstOrThrow();
      const l = await db.insertInto('leads').values({ campaign_id: c.id, dedupe_key: name, phone_number: '+15550000000', state: 'pending', next_due_at: T, created_at: T, updated_at: T }).returning('id').executeTakeFirstOrThrow();
      campaigns.push({ id: c.id, lead: l.id });
    };
    const attempt = (i: number, at: number) =>
      db.insertInto('attempts').values({ campaign_id: campaigns[i]!.id, lead_id: campaigns[i]!.lead, contact_position: 0, phone_number: '+15550000000', assistant_id: 1, state: 'ended', created_at: at, sent_at: at }).execute();
    const fresh = async (id: number, now: number): Promise<number[]> => {
      const since = hoursSince(now);
      const rows = await db.selectFrom('attempts').select('created_at').where('campaign_id', '=', id).where('created_at', '>=', since).execute();
      const bars = new Array<number>(HOURS).fill(0);
      for (const r of rows) bars[Math.min(HOURS - 1, Math.floor((r.created_at - since) / HOUR_MS))]! += 1;
      return bars;
    };

    await addCampaign('a');
    await addCampaign('b');
    // Two days of history: some beyond the chart, some in it.
    for (let k = 0; k < 200; k++) await attempt(k % 2, T - ((k * 997_331) % (48 * HOUR_MS)));
    const counter = createHourlyCounter();
    let now = T;
    for (let step = 0; step < 40; step++) {
      // Attempts at this instant, a few seconds before it (just across an hour's end), and one in the future.
      await attempt(step % 2, now);
      await attempt((step + 1) % 2, now - 5_000);
      if (step === 7) await attempt(0, now + 30_000);
      if (step === 20) {
        await addCampaign('c');
        for (let k = 0; k < 30; k++) await attempt(2, now - k * 1_700_000);
      }
      const ids = campaigns.map((c) => c.id);
      const got = await counter.read(db, ids, now);
      for (const id of ids) expect(got.get(id), `campaign ${id} at step ${step}`).toEqual(await fresh(id, now));
      // Steps of 17 min: hours end between refreshes, sometimes seconds before one.
      now += 17 * 60_000 + (step % 3) * 20_000;
    }
  });
});

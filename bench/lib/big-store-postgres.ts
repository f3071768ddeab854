// big-store.ts's store on PostgreSQL: the same campaigns, leads and attempts (the same
// multiplicative hash decides each lead's state and age, so both dialects measure the same
// data), written by a few INSERT … SELECT FROM generate_series statements instead of a
// million client round trips or COPY: 1,000,000 leads in well under a minute. The schema
// is the real one (migrateToLatest) with its triggers on, as an import would leave it.
import { migrateTarget, withTargetClient, type BenchTarget } from './bench-db.js';
import { bigStoreCampaignName, type BigStoreSummary } from './big-store.js';
import { benchCampaign } from './engine-stack.js';

/** Fills a fresh PostgreSQL target with `leads` leads over `campaigns` campaigns, as buildBigStore does a file. */
export async function buildBigStorePostgres(target: BenchTarget, leads: number, campaigns: number, now: number): Promise<BigStoreSummary> {
  await migrateTarget(target, now);
  return withTargetClient(target, async (c) => {
    for (let i = 1; i <= campaigns; i++) {
      const name = bigStoreCampaignName(i);
      await c.query(
        `insert into campaigns (id, name, state, assistant_id, timezone, max_calls_in_parallel, config_json, created_at, updated_at)
         overriding system value values ($1, $2, 'running', 1, 'UTC', 10, $3, $4, $4)`,
        [i, name, JSON.stringify(benchCampaign(name, 1)), now - 86_400_000],
      );
    }
    // Identity values above the explicit ids, as if the rows had been inserted one by one.
    await c.query(`select setval(pg_get_serial_sequence('campaigns', 'id'), $1)`, [campaigns]);
    // big-store.ts: h = imul(i + 1, 2654435761) >>> 0 (the product's low 32 bits, unsigned),
    // kind = h % 10 (0–6 pending, 7 retry-scheduled, 8 completed, 9 reached-max-retries),
    // age = (h >>> 4) % 1 day; half the retries due already, half within the hour.
    await c.query(
      `with g as (
         select i, ((i + 1)::bigint * 2654435761) % 4294967296 as h from generate_series(0, $1::bigint - 1) as i
       ), k as (
         select i, h % 10 as kind, (h / 16) % 86400000 as age, '+4915' || (100000000 + i) as phone from g
       )
       insert into leads (campaign_id, dedupe_key, phone_number, state, next_due_at, contact_attempts, created_at, updated_at)
       select i % $2 + 1, phone, phone,
         case when kind <= 6 then 'pending' when kind = 7 then 'retry-scheduled' when kind = 8 then 'completed' else 'reached-max-retries' end,
         case when kind <= 6 then $3::bigint - age when kind = 7 then $3::bigint + (case when i % 2 = 0 then -1 else 1 end) * (age % 3600000) end,
         case when kind >= 7 then 1 else 0 end,
         $3::bigint - 86400000, $3::bigint - age
       from k order by i`,
      [leads, campaigns, now],
    );
    // One ended attempt per called lead, two minutes before its last update (its age).
    const attempts = await c.query(
      `insert into attempts (campaign_id, lead_id, contact_position, phone_number, assistant_id, state, outcome, outcome_source, created_at, sent_at, ended_at)
       select campaign_id, id, 0, phone_number, 1, 'ended', case when state = 'completed' then 'success' else 'no-answer' end, 'webhook',
         updated_at - 120000, updated_at - 120000, updated_at - 60000
       from leads where state in ('retry-scheduled', 'completed', 'reached-max-retries') order by id`,
    );
    // Fresh planner statistics and a visibility map, as autovacuum leaves a table that has
    // lived a while (an import of ≥ 10,000 rows analyzes too).
    await c.query('vacuum analyze');
    // The build's writes flushed before anything is timed, as big-store.ts truncates
    // SQLite's WAL: otherwise the claims measured share the disk with the build's checkpoint.
    await c.query('checkpoint');
    return { leads, attempts: attempts.rowCount ?? 0, campaigns };
  });
}

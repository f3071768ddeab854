// `npx tsx bench/postgres-writers.ts [--quick] [--writers N] [--before]`: what writers of ONE
// campaign cost each other on PostgreSQL. N workers (default 4, the API's connections), each
// holding a connection of a pool of N, add single leads to the same campaign with postLeads,
// the code of `POST /campaigns/{name}/leads`, for 10 s (3 s quick), in-process against the
// bench's embedded server; printed: leads/s and each POST's latency, p50 and p99.
//
// `--before`: the status counters as they were before migration 0037 (its down() run first:
// one row per campaign and state, which every writer's trigger updates and holds until its
// commit), so the two can be compared on one machine at one time.
import { performance } from 'node:perf_hooks';
import { migrations } from '../migrations/index.js';
import { postLeads } from '../src/leads/post-leads.js';
import { upsertCampaign } from '../src/store/campaigns.js';
import { campaignCounts } from '../src/store/counts.js';
import { testCampaignConfig } from '../test/helpers/campaign-config.js';
import { benchTarget, migrateTarget } from './lib/bench-db.js';
import { isQuick, reportFigure } from './lib/figures.js';
import { fmt, summary } from './lib/stats.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const WRITERS = Number(arg('--writers') ?? 4);
const SECONDS = isQuick() ? 3 : 10;
const BEFORE = process.argv.includes('--before');
const BENCH = 'postgres-writers';
const counters = BEFORE ? 'counters of before 0037 (one row per state)' : 'counters in slots (0037)';

const target = await benchTarget('postgres', 'unused');
try {
  await migrateTarget(target, 0);
  const handle = await target.open({ maxConnections: WRITERS });
  try {
    if (BEFORE) await migrations['0037_lead_count_slots']!.down(handle.db);
    const campaign = (await upsertCampaign(handle.db, testCampaignConfig('writers'), { timezone: 'UTC' }, 1)).id;
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    const until = started + SECONDS * 1000;
    const worker = async (): Promise<void> => {
      while (performance.now() < until) {
        const n = next++;
        const began = performance.now();
        await postLeads(handle.db, { id: campaign, allowDuplicates: false }, [{ phone_number: `+1415${String(2_000_000 + n)}`, variables: { first_name: `W${n}` } }], {
          now: 1,
          answer: (items) => ({ status: 200, body: items }),
        });
        latencies.push(performance.now() - began);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, worker));
    const seconds = (performance.now() - started) / 1000;
    const pending = (await campaignCounts(handle.db, campaign)).get(campaign)?.leads.pending ?? 0;
    if (pending !== latencies.length) throw new Error(`the counters say ${pending} pending leads after ${latencies.length} POSTs`);
    const s = summary(latencies);
    console.log(`postgres-writers: ${WRITERS} writers of one campaign, ${counters}: ${latencies.length} single-lead POSTs in ${fmt(seconds, 1)} s`);
    const note = `${WRITERS} writers on ${WRITERS} connections, postLeads of one lead each into one campaign, in-process, ${counters}`;
    reportFigure(BENCH, `single-lead postLeads, leads/s${BEFORE ? ' (before 0037)' : ''}`, latencies.length / seconds, 'leads/s', undefined, note);
    reportFigure(BENCH, `single-lead postLeads p50${BEFORE ? ' (before 0037)' : ''}`, s.p50, 'ms', undefined, note);
    reportFigure(BENCH, `single-lead postLeads p99${BEFORE ? ' (before 0037)' : ''}`, s.p99, 'ms', undefined, note);
  } finally {
    await handle.close();
  }
} finally {
  await target.drop();
}

// `npx tsx bench/dashboard.ts [--quick]`: how long the dashboard takes the daemon to serve
// with 100 campaigns and 1,000,000 leads (--quick: 200,000), through its real HTTP
// handler on loopback (the daemon's server, the dashboard's routes, a session cookie):
//  - GET /                      the whole page (status report, 24-hour attempt columns of
//                               every campaign, the overview's row of each), goal ≤ 300 ms;
//  - GET /dashboard/status.json one live refresh, goal ≤ 300 ms;
//  - GET /?phone=…              the page with explain for one number (reported);
//  - GET /dashboard/results.csv one campaign's results export (reported).
// Server time (the request reaching the dashboard to its answer handed to the socket),
// median and worst of RUNS after a first (cold) run; the round trip to the last byte read
// by a client in the same process is reported beside it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { SESSION_COOKIE } from '../src/dashboard/guard.js';
import { openDatabase } from '../src/store/database.js';
import type { Clock } from '../src/time/clock.js';
import { startDashboardServer } from '../test/helpers/dashboard-server.js';
import { bigStoreCampaignName, buildBigStore } from './lib/big-store.js';
import { benchPhone } from './lib/engine-stack.js';
import { atMost, isQuick, reportFigure } from './lib/figures.js';
import { fmt, summary } from './lib/stats.js';

const BENCH = 'dashboard';
const quick = isQuick();
const LEADS = quick ? 200_000 : 1_000_000;
const CAMPAIGNS = 100;
const RUNS = quick ? 5 : 11;
const NOW = Date.UTC(2026, 10, 23, 15, 0, 0);
const TOKEN = 'bench-dashboard-token';

// BENCH_KEEP=1 keeps the built file; BENCH_DB=FILE measures a file built earlier (same size).
const reuse = process.env.BENCH_DB;
const dir = reuse ? path.dirname(reuse) : fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-dashboard-'));
const file = reuse ?? path.join(dir, 'campaignd.db');
try {
  if (!reuse) {
    const t0 = performance.now();
    const built = await buildBigStore(file, LEADS, CAMPAIGNS, NOW);
    console.log(`built ${built.leads.toLocaleString('en')} leads, ${built.attempts.toLocaleString('en')} attempts over ${built.campaigns} campaigns in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  await measure();
} finally {
  if (process.env.BENCH_KEEP || reuse) console.log(`kept ${file}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}

async function measure(): Promise<void> {
  const store = openDatabase(file);
  const clock: Clock = { now: () => NOW, sleep: async () => {}, setTimer: () => () => {} };
  // Server time: from the request reaching the dashboard until its answer was handed to
  // the socket (the client in this same process reads it afterwards).
  let serverMs = 0;
  const http = await startDashboardServer({
    db: store.db,
    clock,
    token: TOKEN,
    version: 'bench',
    wrap: (dashboard) => ({
      owns: (p) => dashboard.owns(p),
      async handle(req, res, url) {
        const t = performance.now();
        await dashboard.handle(req, res, url);
        serverMs = performance.now() - t;
      },
    }),
  });
  const guard = http.guard;
  const cookie = (await guard.startSession()).split(';')[0]!;
  if (!cookie.startsWith(`${SESSION_COOKIE}=`)) throw new Error('unexpected session cookie');
  const base = http.url;
  const get = async (p: string): Promise<{ ms: number; server: number; bytes: number; text: string }> => {
    const t = performance.now();
    const res = await fetch(`${base}${p}`, { headers: { cookie } });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`GET ${p} answered ${res.status}: ${text.slice(0, 200)}`);
    return { ms, server: serverMs, bytes: Buffer.byteLength(text), text };
  };
  type Timed = { first: number; s: ReturnType<typeof summary>; trip: ReturnType<typeof summary>; bytes: number; text: string };
  const timed = async (p: string): Promise<Timed> => {
    const first = await get(p);
    const server: number[] = [];
    const trips: number[] = [];
    let last = first;
    for (let i = 0; i < RUNS; i++) {
      last = await get(p);
      server.push(last.server);
      trips.push(last.ms);
    }
    return { first: first.server, s: summary(server), trip: summary(trips), bytes: last.bytes, text: last.text };
  };
  const load = (): string => `load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`;
  const scale = `${CAMPAIGNS} campaigns, ${LEADS.toLocaleString('en')} leads`;
  try {
    const page = await timed('/');
    // The overview: one row per campaign.
    const shown = (page.text.match(/<tr class="c-row/g) ?? []).length;
    if (shown !== CAMPAIGNS) throw new Error(`the page shows ${shown} campaigns, expected ${CAMPAIGNS}`);
    reportFigure(BENCH, `GET / (page), ${scale}, server time, worst`, page.s.max, 'ms', atMost(300, 'ms'), `median ${fmt(page.s.p50, 1)} ms of ${RUNS} after a first of ${fmt(page.first, 0)} ms; ${(page.bytes / 1024).toFixed(0)} KiB of HTML; ${load()}`);
    reportFigure(BENCH, `GET / (page), ${scale}, round trip (median)`, page.trip.p50, 'ms', undefined, `request to last byte read by a client in the same process; worst ${fmt(page.trip.max, 0)} ms`);

    const refresh = await timed('/dashboard/status.json');
    const doc = JSON.parse(refresh.text) as { data: { status: { campaigns: { leads: { total: number } }[] }; attempts_per_hour: Record<string, number[]> } };
    const total = doc.data.status.campaigns.reduce((n, c) => n + c.leads.total, 0);
    if (total !== LEADS) throw new Error(`the refresh counted ${total} leads, expected ${LEADS}`);
    const hourly = Object.values(doc.data.attempts_per_hour).reduce((n, bars) => n + bars.reduce((a, b) => a + b, 0), 0);
    console.log(`the refresh's 24-hour columns hold ${hourly.toLocaleString('en')} attempts`);
    reportFigure(BENCH, `GET /dashboard/status.json (refresh), ${scale}, server time, worst`, refresh.s.max, 'ms', atMost(300, 'ms'), `median ${fmt(refresh.s.p50, 1)} ms of ${RUNS}; ${(refresh.bytes / 1024).toFixed(0)} KiB; ${load()}`);
    reportFigure(BENCH, `GET /dashboard/status.json (refresh), ${scale}, round trip (median)`, refresh.trip.p50, 'ms', undefined, `worst ${fmt(refresh.trip.max, 0)} ms`);

    const phone = benchPhone(LEADS - 1);
    const search = await timed(`/?phone=${encodeURIComponent(phone)}`);
    if (!search.text.includes('class="explain"')) throw new Error(`the search for ${phone} found no lead`);
    reportFigure(BENCH, `GET /?phone= (page with explain), ${scale}, server time, worst`, search.s.max, 'ms', undefined, `median ${fmt(search.s.p50, 1)} ms of ${RUNS}`);

    const csv = await timed(`/dashboard/results.csv?campaign=${encodeURIComponent(bigStoreCampaignName(1))}`);
    const rows = csv.text.split('\n').length - 2;
    reportFigure(BENCH, `GET /dashboard/results.csv, one campaign of ${(LEADS / CAMPAIGNS).toLocaleString('en')} leads, server time (median)`, csv.s.p50, 'ms', undefined, `${rows.toLocaleString('en')} records, ${(csv.bytes / 1024 / 1024).toFixed(1)} MiB; worst ${fmt(csv.s.max, 0)} ms`);
  } finally {
    await http.close();
    await store.close();
  }
}

// `npx tsx bench/api-bulk.ts [--dialect sqlite|postgres] [--runs N] [--bin A.js,B.js] [--profile DIR]`:
// the bulk part of bench/api.ts alone, for working on it: POSTs of 10,000 leads (external_id
// and 2 variables each, as bench/api.ts sends) to the real daemon (a child process), one
// fresh set of numbers per POST, whole HTTP round trips as a client sees them.
//   --bin: campaignd bins to compare (e.g. an older build's bin/campaignd.js and this one);
//          the POSTs alternate between them (a daemon restarted per POST on the same
//          database), so that a shared machine's load falls on both alike.
//   --profile DIR: the daemons run with `node --cpu-prof` into DIR (summarise a .cpuprofile
//          with bench/profile-summary.ts); --profile-interval US: its sampling interval.
//   --posts N: POSTs per daemon start (default 1): the first after a start pays what is
//          cold (JIT, lazy modules, new server sessions), the ones after it do not.
// Prints each POST's time and the worst rate per bin with the load average beside it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { daemonEnv, makeWorkspace, numbers, SECRETS, startSimulator, type SimProcess, type Workspace } from '../test/e2e/daemon-fixture.js';
import { BIN, runCampaignd, spawnNode, stopAllProcesses, waitForHttp } from '../test/helpers/processes.js';
import { benchDialect, benchTarget, dialectLabel, type BenchTarget } from './lib/bench-db.js';
import { fmt } from './lib/stats.js';

const ITEMS = 10_000;
const dialect = benchDialect();

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const runs = Number(arg('--runs') ?? 4);
const bins = (arg('--bin') ?? BIN).split(',').map((b) => path.resolve(b));
const profileDir = arg('--profile');
/** The profiler's sampling interval in µs (--profile-interval; node's default 1,000). */
const profileInterval = arg('--profile-interval');
const postsPerStart = Number(arg('--posts') ?? 1);

const loadavg = (): string => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-bench-bulk-'));
  let sim: SimProcess | null = null;
  let target: BenchTarget | null = null;
  try {
    console.log(`api-bulk (${dialectLabel(dialect)}): ${runs} POSTs of ${ITEMS.toLocaleString('en')} leads per bin, alternated: ${bins.join(', ')}`);
    sim = await startSimulator({ token: SECRETS.token, seed: 7 });
    const ws: Workspace = await makeWorkspace({ simUrl: sim.url, campaigns: [{ name: 'bulk', leads: [], maxParallel: 1, maxRetries: 0, retryInterval: 60, status: 'paused' }] });
    const file = path.join(ws.dir, 'campaigns', 'bulk.yaml');
    fs.writeFileSync(file, `${JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), mark_complete_when_no_leads: false }, null, 2)}\n`);
    target = await benchTarget(dialect, path.join(dir, 'campaignd.db'));
    const env = { ...daemonEnv(), CAMPAIGND_DATABASE: target.database, ...target.env, CAMPAIGND_STALE_CHECK: 'off' };
    const created = await runCampaignd(['api-key', 'create', 'bench', '--scope', 'write', '--config', ws.configPath], env);
    const key = /cdk_[A-Za-z0-9_-]+/.exec(created.stdout)?.[0];
    if (!key) throw new Error(`api-key create failed (${created.code}): ${created.stderr}`);
    const rates = bins.map(() => [] as { rate: number; load: string }[]);
    let post = 0;
    for (let run = 0; run < runs; run++) {
      for (let b = 0; b < bins.length; b++) {
        // `node FLAGS BIN run`: the bin's own node flag (its #! line), and the profiler's.
        const [first, ...rest] = ['--max-semi-space-size=4', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(profileInterval ? [`--cpu-prof-interval=${profileInterval}`] : [])] : []), bins[b]!, 'run', '--config', ws.configPath];
        const proc = spawnNode(`daemon-${b}`, first!, rest, { env });
        await proc.waitForLine(/"msg":"campaignd running"/, 30_000);
        await waitForHttp(`${ws.httpUrl}/healthz`);
        for (let p = 0; p < postsPerStart; p++) {
          const body = JSON.stringify(numbers(ITEMS, 1_000_000 + post++ * ITEMS).map((phone_number, i) => ({ phone_number, external_id: `crm-${post}-${i}`, variables: { first_name: `Bulk${i}`, plan: 'gold' } })));
          const load = loadavg();
          const t0 = performance.now();
          const res = await fetch(`${ws.httpUrl}/api/v1/campaigns/bulk/leads`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
          const json = (await res.json()) as { items?: { outcome: string }[] };
          const ms = performance.now() - t0;
          const accepted = (json.items ?? []).filter((i) => i.outcome === 'accepted').length;
          if (res.status !== 200 || accepted !== ITEMS) throw new Error(`POST answered ${res.status} with ${accepted} accepted: ${JSON.stringify(json).slice(0, 300)}`);
          rates[b]!.push({ rate: ITEMS / (ms / 1000), load });
          console.log(`  bin ${b + 1} run ${run + 1}${postsPerStart > 1 ? ` post ${p + 1}` : ''}: ${fmt(ms, 0)} ms = ${fmt(ITEMS / (ms / 1000), 0)} leads/s (load ${load})`);
        }
        await proc.stop(10_000);
      }
    }
    bins.forEach((bin, b) => {
      const worst = rates[b]!.reduce((w, r) => (r.rate < w.rate ? r : w));
      const best = Math.max(...rates[b]!.map((r) => r.rate));
      console.log(`bin ${b + 1} (${bin}): worst ${fmt(worst.rate, 0)} leads/s (load ${worst.load}), best ${fmt(best, 0)}`);
    });
  } finally {
    await stopAllProcesses();
    await target?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

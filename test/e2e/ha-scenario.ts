// Active and standby on one PostgreSQL database (docs/design.md §10), as two real `campaignd run`
// processes behind a load-balancing webhook proxy, against the simulator dropping a share of
// make_call answers after creating the call. Whichever instance is active is killed with
// SIGKILL `kills` times (restarted each time, as systemd would) and once frozen with SIGSTOP
// past its lease, then woken. The checks: every lead final, every dialing rule (docs/design.md §3) on the
// service's own record (no double dial above all), and each takeover's first call within
// lease_seconds + 5 s of the failure. Shared by the short profile (test/e2e) and test/stress.
import fs from 'node:fs';
import path from 'node:path';
import { readLease } from '../../src/store/lease.js';
import { openStore } from '../../src/store/open-store.js';
import { mulberry32 } from '../../src/simulator/random.js';
import { freePort, type Proc } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { startWebhookProxy } from '../helpers/webhook-proxy.js';
import {
  assertCampaignRulesShowingCalls,
  assertNoSecrets,
  campaignState,
  daemonEnv,
  makeWorkspace,
  numbers,
  SECRETS,
  startDaemon,
  type CampaignSpec,
  type RecordedCall,
  type Workspace,
} from './daemon-fixture.js';
import { startService } from './service-under-test.js';

export interface HaScenario {
  seed: number;
  /** A PostgreSQL database of its own, empty (createTestDatabase), with its password. */
  databaseUrl: string;
  leaseSeconds: number;
  kills: number;
  leads: number;
  /** Share of make_call connections dropped after the call was created. */
  dropShare: number;
  maxParallel: number;
  finishTimeoutMs: number;
}

export interface Takeover {
  cause: 'SIGKILL' | 'SIGSTOP';
  /** From the failure to the first call the next active instance placed, in ms. */
  firstCallMs: number;
}

export interface HaReport {
  calls: RecordedCall[];
  takeovers: Takeover[];
  daemons: Proc[];
  /** Claims the database refused because their lease was no longer current (fencing at work). */
  fencedClaims: number;
  proxy: { forwarded: Record<number, number>; failed: number };
  workspace: Workspace;
}

const PLACED = /"msg":"call placed"/;

/** The pid of the instance holding the lease now, or null. */
async function activePid(url: string): Promise<number | null> {
  const store = await openStore(url, { readonly: true });
  try {
    const lease = await readLease(store.db);
    if (!lease?.live) return null;
    const row = await store.db.selectFrom('daemons').select('pid').where('instance_id', '=', lease.holder).executeTakeFirst();
    return row?.pid ?? null;
  } finally {
    await store.close();
  }
}

/** Epoch ms of the first "call placed" line `proc` wrote after output offset `from`, or null. */
function firstPlacedAfter(proc: Proc, from: number): number | null {
  for (const line of proc.stdout().slice(from).split('\n')) {
    if (!PLACED.test(line)) continue;
    const time = /"time":(\d+)/.exec(line);
    if (time) return Number(time[1]);
  }
  return null;
}

export async function runHaScenario(s: HaScenario, onWorkspace: (ws: Workspace) => void): Promise<HaReport> {
  const rand = mulberry32(s.seed);
  const service = await startService('simulator', { seed: s.seed });
  await service.setFaults([{ rules: [{ path: '/api/user/make_call', dropAfterCreate: s.dropShare }] }]);
  const spec: CampaignSpec = { name: 'ha', leads: numbers(s.leads).map((n) => [n]), maxParallel: s.maxParallel, maxRetries: 1, retryInterval: 1 };
  const ws = await makeWorkspace({ simUrl: service.url, campaigns: [spec], settleSeconds: 5, serverTimezone: service.serverTimezone, assistantId: service.assistantId });
  onWorkspace(ws);

  // Two instances: one config each, differing only in http.listen; the database comes from
  // the environment without its password (PGPASSWORD), as deploy/ sets it up.
  const url = new URL(s.databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  ws.databaseUrl = s.databaseUrl;
  const base = fs.readFileSync(ws.configPath, 'utf8').replace(/^database: .*$/m, '') + `ha:\n  lease_seconds: ${s.leaseSeconds}\n`;
  const ports = [ws.httpPort, await freePort()];
  const configs = ports.map((port, i) => {
    const file = path.join(ws.dir, `campaignd-${i}.yaml`);
    fs.writeFileSync(file, base.replace(/listen: 127\.0\.0\.1:\d+/, `listen: 127.0.0.1:${port}`));
    return file;
  });
  const env = { ...daemonEnv(), CAMPAIGND_DATABASE: url.toString(), PGPASSWORD: password };
  const proxy = await startWebhookProxy(ports);
  const daemons: Proc[] = [];
  const slots: (Proc | null)[] = [null, null];
  let started = 0;
  const start = async (slot: number): Promise<Proc> => {
    const d = await startDaemon({ ...ws, configPath: configs[slot]!, httpPort: ports[slot]!, httpUrl: `http://127.0.0.1:${ports[slot]}` }, env, `instance-${slot}-${started++}`);
    daemons.push(d);
    slots[slot] = d;
    return d;
  };

  const takeovers: Takeover[] = [];
  try {
    await start(0);
    await start(1);
    await service.setWebhook(`${proxy.url}/webhooks/post-call?secret=${SECRETS.webhook}`);

    /** The active instance's process and slot, once one holds the lease. */
    const active = async (): Promise<{ proc: Proc; slot: number }> => {
      let found: { proc: Proc; slot: number } | null = null;
      await waitUntil(
        async () => {
          const pid = await activePid(s.databaseUrl);
          const slot = slots.findIndex((p) => p?.pid === pid && p.running());
          found = slot >= 0 ? { proc: slots[slot]!, slot } : null;
          return found !== null;
        },
        { timeoutMs: 30_000, intervalMs: 100, message: 'an instance holding the lease' },
      );
      return found!;
    };

    /** Waits for the next active instance's first call after `failedAt`; the other slot is `survivor`. */
    const measureTakeover = async (cause: Takeover['cause'], failedAt: number, survivor: Proc, survivorFrom: number): Promise<void> => {
      let placedAt: number | null = null;
      await waitUntil(
        () => {
          placedAt = firstPlacedAfter(survivor, survivorFrom);
          return placedAt !== null;
        },
        { timeoutMs: (s.leaseSeconds + 30) * 1000, intervalMs: 50, message: `a call placed by ${survivor.name} after the ${cause}` },
      );
      takeovers.push({ cause, firstCallMs: placedAt! - failedAt });
    };

    for (let k = 0; k < s.kills; k++) {
      const { proc, slot } = await active();
      // A random moment of its work: after 1–3 more calls placed, plus up to 300 ms.
      const target = proc.count(PLACED) + 1 + Math.floor(rand() * 3);
      await waitUntil(() => proc.count(PLACED) >= target, { timeoutMs: 30_000, intervalMs: 5, message: `${target} calls placed by ${proc.name}` });
      await new Promise<void>((resolve) => setTimeout(resolve, Math.floor(rand() * 300)));
      const survivor = slots[1 - slot]!;
      const from = survivor.stdout().length;
      const killedAt = Date.now();
      proc.child.kill('SIGKILL');
      await proc.exited;
      await measureTakeover('SIGKILL', killedAt, survivor, from);
      await start(slot);
    }

    // Frozen past the lease: the other takes over; woken up, the frozen one dials no more.
    const { proc: frozen, slot } = await active();
    const survivor = slots[1 - slot]!;
    const from = survivor.stdout().length;
    const stoppedAt = Date.now();
    frozen.child.kill('SIGSTOP');
    await measureTakeover('SIGSTOP', stoppedAt, survivor, from);
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, stoppedAt + s.leaseSeconds * 2000 - Date.now())));
    frozen.child.kill('SIGCONT');
    await frozen.waitForLine(/"msg":"lease lost: standing by"/, 15_000);

    await waitUntil(async () => (await campaignState(ws, 'ha')) === 'completed', {
      timeoutMs: s.finishTimeoutMs,
      intervalMs: 250,
      message: async () => `campaign ha completed; calls ${(await service.calls()).length}; takeovers ${JSON.stringify(takeovers)}; tails:\n${slots.map((p) => `${p?.name}: ${p?.stdout().slice(-2000)}`).join('\n')}`,
    });
    for (const p of slots) {
      const exit = await p!.stop();
      if (exit.code !== 0) throw new Error(`${p!.name} exited ${JSON.stringify(exit)} after SIGTERM:\n${p!.stderr().slice(-2000)}`);
    }
    const calls = await service.calls();
    await assertCampaignRulesShowingCalls(ws, [spec], calls);
    assertNoSecrets(
      daemons.flatMap((d) => [d.stdout(), d.stderr()]),
      'the daemons output',
    );
    if (daemons.some((d) => d.stdout().includes(password) || d.stderr().includes(password))) throw new Error('the database password reached a daemon log');
    const fencedClaims = daemons.reduce((n, d) => n + d.count(/claim refused/), 0);
    return { calls, takeovers, daemons, fencedClaims, proxy: proxy.stats(), workspace: ws };
  } finally {
    for (const p of slots) if (p?.running()) p.child.kill('SIGCONT');
    await proxy.close();
  }
}

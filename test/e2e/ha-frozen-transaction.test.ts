// An instance frozen in the middle of a transaction (SIGSTOP here; a paused VM or container,
// a swapped-out process alike) on PostgreSQL, with another active instance beside it. The
// frozen instance's connection stays open (the kernel still answers for its socket), so the
// server keeps its transaction, and with it the row locks it took, for as long as it is
// frozen. Its accounts' leases expire and the other instance takes them, but the campaign's
// rows the frozen transaction locked would keep the taker's claims waiting until the frozen
// one woke: its accounts undialed for as long as it stays frozen. The daemon's sessions end a
// transaction left idle longer than the lease (idle_in_transaction_session_timeout), so the
// server rolls the frozen one back and the takeover dials within lease_seconds + 5.
//
// The freeze is aimed: SIGSTOP, then the frozen process's own backends are read in
// pg_stat_activity (matched by the client ports of its sockets); frozen outside a
// transaction, it is woken and frozen again a moment later, until one catches it inside one.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { StatusReport } from '../../src/status/types.js';
import { runCampaignd, stopAllProcesses, type Proc } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { sharingWorkspace } from './sharing-fixture.js';
import { assistantOf, campaignState, readWorkspace, SECRETS, startDaemon, startSimulator, type Workspace } from './daemon-fixture.js';

let ws: Workspace | null = null;
let drop: (() => Promise<void>) | null = null;
let frozen: Proc | null = null;
afterEach(async () => {
  if (frozen?.running()) frozen.child.kill('SIGCONT');
  frozen = null;
  await stopAllProcesses();
  ws?.cleanup();
  ws = null;
  await drop?.();
  drop = null;
});

const LEASE_SECONDS = 3;
const LEADS = 40;
const ACCOUNTS = ['acme', 'globex'];
const TOKENS = [SECRETS.token, 'tok-E2E-globex-5d1e-DO-NOT-LOG'];

/** The local TCP ports of a process's sockets (its connections' client ports, as pg_stat_activity shows them). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    const lines = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

describe('an instance frozen inside a transaction on PostgreSQL', () => {
  it('loses its accounts to the other instance, which dials them within lease_seconds + 5', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const sim = await startSimulator({ token: TOKENS[0]!, seed: 11, callDuration: '1-2', extra: ['--token', TOKENS[1]!] });
    const assistants = await Promise.all(TOKENS.map((t) => assistantOf(sim.url, t)));
    const accountOfAssistant = new Map(assistants.map((id, i) => [id, ACCOUNTS[i]!]));
    const shared = await sharingWorkspace({ simUrl: sim.url, databaseUrl: database.url, accounts: ACCOUNTS, tokens: TOKENS, assistants, leadsPerAccount: LEADS, maxParallel: 4, leaseSeconds: LEASE_SECONDS, instances: 2 });
    ws = shared.ws;
    const { workspace, env, ports, configs } = shared;
    const instances: Proc[] = await Promise.all(ports.map((port, i) => startDaemon({ ...workspace, configPath: configs[i]!, httpPort: port, httpUrl: `http://127.0.0.1:${port}` }, env, `instance-${i}`)));

    let holders = new Map<string, number>();
    await waitUntil(
      async () => {
        const out = await runCampaignd(['status', '--json', '--config', configs[0]!], env);
        const report = JSON.parse(out.stdout) as StatusReport;
        holders = new Map((report.accounts ?? []).filter((a) => a.lease_expires_at !== null).map((a) => [a.name, a.pid]));
        return holders.size === ACCOUNTS.length && new Set(holders.values()).size === 2;
      },
      { timeoutMs: 20_000, intervalMs: 300, message: () => `each instance holding an account: ${JSON.stringify([...holders])}` },
    );
    const victim = instances.find((p) => p.child.pid === holders.get('globex'))!;
    const victimAccounts = ACCOUNTS.filter((a) => holders.get(a) === victim.child.pid);
    const callsOf = async (account: string): Promise<{ created_at_ms: number }[]> =>
      (await sim.calls()).filter((c) => accountOfAssistant.get((c as { assistant_id?: number }).assistant_id ?? -1) === account);
    await waitUntil(async () => (await callsOf(victimAccounts[0]!)).length > 0, { timeoutMs: 20_000, intervalMs: 100, message: 'a call of the victim’s account' });

    // Freeze it until one freeze catches it inside a transaction that holds row locks.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    let caught: { pid: number; query: string; locks: number } | null = null;
    let tries = 0;
    let frozenAt = 0;
    try {
      for (; tries < 400; tries++) {
        victim.child.kill('SIGSTOP');
        frozen = victim;
        frozenAt = Date.now();
        // A statement in flight still completes on the server; its session then waits, idle in transaction.
        await new Promise<void>((resolve) => setTimeout(resolve, 150));
        const mine = localPorts(victim.child.pid!);
        const { rows } = await admin.query<{ pid: number; client_port: number; query: string; locks: string }>(
          `select a.pid, a.client_port, a.query,
                  (select count(*) from pg_locks l where l.pid = a.pid and l.granted and l.locktype in ('tuple', 'transactionid')) as locks
             from pg_stat_activity a
            where a.datname = current_database() and a.state = 'idle in transaction' and a.backend_xid is not null`,
        );
        const hit = rows.find((r) => mine.has(r.client_port));
        if (hit) {
          caught = { pid: hit.pid, query: hit.query, locks: Number(hit.locks) };
          break;
        }
        victim.child.kill('SIGCONT');
        frozen = null;
        await new Promise<void>((resolve) => setTimeout(resolve, 5 + Math.random() * 40));
      }
      expect(caught, `no freeze among ${tries} caught the instance inside a writing transaction`).not.toBeNull();

      // The other instance dials each of the frozen one's accounts within lease_seconds + 5.
      for (const account of victimAccounts) {
        let firstAfter = 0;
        await waitUntil(
          async () => {
            const after = (await callsOf(account)).filter((c) => c.created_at_ms > frozenAt);
            firstAfter = Math.min(...after.map((c) => c.created_at_ms));
            return after.length > 0;
          },
          {
            timeoutMs: (LEASE_SECONDS + 15) * 1000,
            intervalMs: 100,
            message: async () =>
              `account ${account} dialed again after the freeze inside "${caught!.query.slice(0, 120)}"; waiting now: ${JSON.stringify(
                (await admin.query(`select pid, state, wait_event_type, wait_event, left(query, 100) as query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows,
              )}`,
          },
        );
        expect(firstAfter - frozenAt, `account ${account} undialed too long after the freeze inside "${caught!.query.slice(0, 120)}"`).toBeLessThan((LEASE_SECONDS + 5) * 1000);
      }
      // The server ended the frozen transaction: its backend is gone.
      const { rows: left } = await admin.query('select 1 from pg_stat_activity where pid = $1', [caught!.pid]);
      expect(left).toEqual([]);
    } finally {
      await admin.end();
    }

    // Woken: it finds its connection ended, opens another, and calls nobody the other dialed.
    victim.child.kill('SIGCONT');
    frozen = null;
    for (const name of ACCOUNTS) {
      await waitUntil(async () => (await campaignState(workspace, `c-${name}`)) === 'completed', {
        timeoutMs: 150_000,
        intervalMs: 300,
        message: async () =>
          `campaign c-${name} completed; ${JSON.stringify(
            await readWorkspace(workspace, async (db) => {
              const c = await db.selectFrom('campaigns').selectAll().where('id', '=', (await db.selectFrom('campaigns').select('id').where('name', '=', `c-${name}`).executeTakeFirstOrThrow()).id).executeTakeFirstOrThrow();
              const leads = await db.selectFrom('leads').select(['state']).where('campaign_id', '=', c.id).execute();
              const attempts = await db.selectFrom('attempts').selectAll().where('campaign_id', '=', c.id).where('state', 'not in', ['ended']).execute();
              const counts = new Map<string, number>();
              for (const l of leads) counts.set(l.state, (counts.get(l.state) ?? 0) + 1);
              return { state: c.state, leads: [...counts], attempts };
            }),
          )}; running: ${instances.map((p) => p.running())}; ${instances.map((p) => (p.stdout() + p.stderr()).split('\n').filter((l) => /"level":(40|50|60)|"acme"/.test(l)).slice(-25).join('\n')).join('\n')}`,
      });
    }
    const calls = await sim.calls();
    const perNumber = new Map<string, number>();
    for (const c of calls) perNumber.set(c.client_phone_number, (perNumber.get(c.client_phone_number) ?? 0) + 1);
    expect([...perNumber.entries()].filter(([, n]) => n > 1)).toEqual([]);
    expect(calls).toHaveLength(ACCOUNTS.length * LEADS);
    for (const p of instances) expect(await p.stop()).toEqual({ code: 0, signal: null });
  }, 300_000);
});

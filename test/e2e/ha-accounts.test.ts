// Several active instances on one PostgreSQL database (docs/several-instances.md): two real
// `campaignd run` processes with four accounts, against one simulator with a token (its own
// assistant and limiter) per account. Judged from the simulator's own record: the accounts
// are split (each instance dials some), every lead is called exactly once (no double dial,
// also across the takeover), and after SIGKILL of one instance its accounts are dialed again
// by the other within lease_seconds + 5. `status --json` shows who holds each account.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/types.js';
import { freePort, httpGet, runCampaignd, spawnCampaignd, stopAllProcesses, waitForHttp, type Proc } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-store.js';
import { waitUntil } from '../helpers/wait.js';
import { sharingWorkspace } from './sharing-fixture.js';
import { assistantOf, assertNoSecrets, campaignState, readWorkspace, numbers, SECRETS, startDaemon, startSimulator, type Workspace } from './daemon-fixture.js';

let ws: Workspace | null = null;
let drop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = null;
  await drop?.();
  drop = null;
});

const LEASE_SECONDS = 3;
const LEADS = 12;
const ACCOUNTS = ['acme', 'globex', 'initech', 'umbrella'];
const TOKENS = [SECRETS.token, 'tok-E2E-globex-91b2-DO-NOT-LOG', 'tok-E2E-initech-77c4-DO-NOT-LOG', 'tok-E2E-umbrella-3a0f-DO-NOT-LOG'];


describe('several active instances sharing four accounts on one PostgreSQL database', () => {
  it('splits the accounts, dials every lead once, and redials a killed instance’s accounts within lease_seconds + 5', async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    const sim = await startSimulator({ token: TOKENS[0]!, seed: 5, callDuration: '1-2', extra: TOKENS.slice(1).flatMap((t) => ['--token', t]) });
    const assistants = await Promise.all(TOKENS.map((t) => assistantOf(sim.url, t)));
    expect(new Set(assistants).size).toBe(ACCOUNTS.length);
    const accountOfAssistant = new Map(assistants.map((id, i) => [id, ACCOUNTS[i]!]));
    const shared = await sharingWorkspace({ simUrl: sim.url, databaseUrl: database.url, accounts: ACCOUNTS, tokens: TOKENS, assistants, leadsPerAccount: LEADS, maxParallel: 4, leaseSeconds: LEASE_SECONDS, instances: 2, webhookRegister: true });
    ws = shared.ws;
    const { workspace, env, accountsYaml, base, ports, configs } = shared;
    // Both at once, so the accounts are split from the start; webhooks all reach instance 0
    // (also those of the accounts instance 1 holds: recorded by a non-holder).
    const instances: Proc[] = await Promise.all(ports.map((port, i) => startDaemon({ ...workspace, configPath: configs[i]!, httpPort: port, httpUrl: `http://127.0.0.1:${port}` }, env, `instance-${i}`)));
    // webhook.register: each instance sets the assistants of the accounts it takes, and only
    // those (setting every account's at start spent requests on tokens another instance was
    // dialing at their full rate). Wait for every account's, then check who set which.
    const logged = (p: Proc, msg: string): Set<string> =>
      new Set(
        p
          .stdout()
          .split('\n')
          .filter((l) => l.includes(`"msg":"${msg}"`))
          .map((l) => (JSON.parse(l) as { account?: string }).account ?? ''),
      );
    const registeredBy = (p: Proc): Set<string> => logged(p, 'post-call webhook registered with the assistant');
    await waitUntil(() => ACCOUNTS.every((a) => instances.some((p) => registeredBy(p).has(a))), {
      timeoutMs: 20_000,
      intervalMs: 100,
      message: () => `every account’s webhook registered by an instance that took it; registered: ${JSON.stringify(instances.map((p) => [...registeredBy(p)]))}; ${instances.map((p) => p.stdout().split('\n').filter((l) => /webhook|account taken/.test(l)).slice(-8).join('\n')).join('\n')}`,
    });
    for (const p of instances) {
      const taken = logged(p, 'account taken: dialing it');
      expect([...registeredBy(p)].filter((a) => !taken.has(a)), `instance ${p.child.pid} registered webhooks of accounts it never took`).toEqual([]);
    }
    // Then every account's assistant posts its webhooks to instance 0.
    for (const [i, token] of TOKENS.entries()) {
      await sim.setWebhook(`http://127.0.0.1:${ports[0]}/webhooks/post-call?secret=${SECRETS.webhook}`, { assistant: assistants[i]!, token });
    }

    const status = async (): Promise<StatusReport> => {
      const out = await runCampaignd(['status', '--json', '--config', configs[0]!], env);
      expect(out.code, out.stderr).toBe(0);
      assertNoSecrets([out.stdout, out.stderr], 'status');
      return JSON.parse(out.stdout) as StatusReport;
    };
    // Split: each instance holds some accounts (status reads the account_leases table).
    let holders = new Map<string, number>();
    await waitUntil(
      async () => {
        const report = await status();
        holders = new Map((report.accounts ?? []).filter((a) => a.lease_expires_at !== null).map((a) => [a.name, a.pid]));
        return holders.size === ACCOUNTS.length && new Set(holders.values()).size === 2;
      },
      { timeoutMs: 20_000, intervalMs: 300, message: 'both instances holding accounts' },
    );
    // /metrics agrees: each account reads 1 on its holder and 0 on the other (the gauges follow the heartbeat).
    const dialingOn = async (port: number): Promise<Map<string, number>> => {
      const body = (await httpGet(`http://127.0.0.1:${port}/metrics`)).body;
      return new Map([...body.matchAll(/^campaignd_account_dialing\{account="([^"]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
    };
    // The holders are read again on each try: an account may still move once after the first
    // split (the spread settles by rebalancing), and the gauges must agree with the leases as
    // they are now, not as they were at the first reading.
    let seen: Map<string, number>[] = [];
    await waitUntil(
      async () => {
        const report = await status();
        holders = new Map((report.accounts ?? []).filter((a) => a.lease_expires_at !== null).map((a) => [a.name, a.pid]));
        seen = await Promise.all(ports.map(dialingOn));
        return holders.size === ACCOUNTS.length && new Set(holders.values()).size === 2 && ACCOUNTS.every((a) => seen.every((m, i) => m.get(a) === (holders.get(a) === instances[i]!.pid ? 1 : 0)));
      },
      { timeoutMs: 15_000, intervalMs: 300, message: () => `campaignd_account_dialing matching the holders ${JSON.stringify([...holders])}: ${JSON.stringify(seen.map((m) => [...m]))}` },
    );
    const victim = instances[1]!;
    const victimAccounts = ACCOUNTS.filter((a) => holders.get(a) === victim.pid);
    expect(victimAccounts.length).toBeGreaterThan(0);
    // The victim has been dialing its accounts: wait for one of its calls, so the kill may leave one in flight.
    const callsOf = async (account: string): Promise<{ created_at_ms: number }[]> =>
      (await sim.calls()).filter((c) => accountOfAssistant.get((c as { assistant_id?: number }).assistant_id ?? -1) === account);
    await waitUntil(async () => (await callsOf(victimAccounts[0]!)).length > 0, { timeoutMs: 20_000, intervalMs: 100, message: 'a call of the victim’s account' });
    for (const a of victimAccounts) expect((await callsOf(a)).length, `account ${a} has leads left to dial after the kill`).toBeLessThan(LEADS);

    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    // Each of its accounts: a call created after the kill, by the survivor, within lease_seconds + 5.
    for (const account of victimAccounts) {
      let firstAfter = 0;
      await waitUntil(
        async () => {
          const after = (await callsOf(account)).filter((c) => c.created_at_ms > killedAt);
          firstAfter = Math.min(...after.map((c) => c.created_at_ms));
          return after.length > 0;
        },
        { timeoutMs: 30_000, intervalMs: 100, message: `account ${account} dialed again after the kill` },
      );
      expect(firstAfter - killedAt, `account ${account} undialed too long`).toBeLessThan((LEASE_SECONDS + 5) * 1000);
    }
    const survivor = instances[0]!;
    await waitUntil(
      async () => {
        const report = await status();
        return ACCOUNTS.every((a) => report.accounts?.find((x) => x.name === a && x.lease_expires_at !== null)?.pid === survivor.pid);
      },
      { timeoutMs: 15_000, intervalMs: 300, message: 'status showing the survivor holding every account' },
    );

    // An instance started without accounts: would dial every campaign under the one lease beside the survivor: refused, one line.
    const pairConfig = path.join(workspace.dir, 'campaignd-pair.yaml');
    const pairPort = await freePort();
    fs.writeFileSync(pairConfig, base.replace(accountsYaml, '').replace(/listen: 127\.0\.0\.1:\d+/, `listen: 127.0.0.1:${pairPort}`));
    const pair = spawnCampaignd('no-accounts', ['run', '--config', pairConfig], { env: { ...env, CAMPAIGND_API_TOKEN: TOKENS[0]! } });
    const exit = await Promise.race([pair.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))]);
    expect(exit, 'the instance without accounts: should refuse to start').not.toBeNull();
    expect(exit!.code).not.toBe(0);
    expect(pair.stderr()).toMatch(/campaignd-pair\.yaml: accounts: is missing, but 1 instance\(s\) on this database share accounts/);

    for (const name of ACCOUNTS) {
      await waitUntil(async () => (await campaignState(workspace, `c-${name}`)) === 'completed', {
        timeoutMs: 60_000,
        intervalMs: 300,
        message: async () =>
          `campaign c-${name} completed; ${JSON.stringify(
            await readWorkspace(workspace, async (db) => {
              const c = await db.selectFrom('campaigns').selectAll().where('name', '=', `c-${name}`).executeTakeFirstOrThrow();
              const leads = await db.selectFrom('leads').select(['state']).where('campaign_id', '=', c.id).execute();
              const attempts = await db.selectFrom('attempts').selectAll().where('campaign_id', '=', c.id).where('state', 'not in', ['ended']).execute();
              return { c, leads: leads.map((l) => l.state), attempts };
            }),
          )} ${(instances[0]!.stdout() + instances[0]!.stderr()).split('\n').filter((l) => l.includes(`"${name}"`)).slice(-30).join('\n')}`,
      });
    }
    // The simulator's own record: every lead called exactly once, each with its account's assistant.
    const calls = await sim.calls();
    const perNumber = new Map<string, number>();
    for (const c of calls) perNumber.set(c.client_phone_number, (perNumber.get(c.client_phone_number) ?? 0) + 1);
    expect([...perNumber.values()].filter((n) => n > 1)).toEqual([]);
    expect(calls).toHaveLength(ACCOUNTS.length * LEADS);
    for (const [i, name] of ACCOUNTS.entries()) {
      const own = new Set(numbers(LEADS, i * 100));
      expect(calls.filter((c) => own.has(c.client_phone_number)).every((c) => accountOfAssistant.get((c as { assistant_id?: number }).assistant_id ?? -1) === name)).toBe(true);
    }
    expect(await survivor.stop()).toEqual({ code: 0, signal: null });
    assertNoSecrets([survivor.stdout(), survivor.stderr()], 'the daemon output');

    // The other way round: beside a running standby pair's instance (no accounts:), an
    // instance with accounts: would dial its accounts while the pair dials every campaign: refused.
    const oneLease = spawnCampaignd('one-lease', ['run', '--config', pairConfig], { env: { ...env, CAMPAIGND_API_TOKEN: TOKENS[0]! } });
    await waitForHttp(`http://127.0.0.1:${pairPort}/healthz`);
    const sharing = spawnCampaignd('with-accounts', ['run', '--config', configs[1]!], { env });
    const refused = await Promise.race([sharing.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))]);
    expect(refused, 'the instance with accounts: should refuse to start beside the standby pair').not.toBeNull();
    expect(refused!.code).not.toBe(0);
    expect(sharing.stderr()).toMatch(/accounts: is set, but 1 instance\(s\) on this database \(pid \d+ on [^)]+\) run without accounts: as a standby pair/);
    expect(await oneLease.stop()).toEqual({ code: 0, signal: null });
  }, 150_000);
});

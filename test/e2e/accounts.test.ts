// Many accounts with the real daemon (README, "Many accounts"): one simulator with two
// tokens (each its own assistants and limiter), a daemon file with two accounts and a
// campaign on each. validate --online checks both tokens and both accounts' assistants;
// `run` dials both and takes both assistants' webhooks; `status --json` lists both accounts;
// no token in any output.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/status/types.js';
import { httpGet, runCampaignd, stopAllProcesses } from '../helpers/processes.js';
import { waitUntil } from '../helpers/wait.js';
import { assistantOf, assertNoSecrets, campaignState, daemonEnv, makeWorkspace, numbers, SECRETS, startDaemon, startSimulator, webhookUrl, type SimWebhookJson, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(async () => {
  await stopAllProcesses();
  ws?.cleanup();
  ws = undefined;
});

const TOKEN_B = 'tok-E2E-account-b-5e0c-DO-NOT-LOG';


describe('campaignd with two accounts', () => {
  it('validates both accounts online, dials both, and status lists both', async () => {
    const sim = await startSimulator({ token: SECRETS.token, seed: 3, extra: ['--token', TOKEN_B] });
    const assistantB = await assistantOf(sim.url, TOKEN_B);
    expect(assistantB).not.toBe(1);
    ws = await makeWorkspace({
      simUrl: sim.url,
      campaigns: [
        { name: 'alpha', leads: numbers(3).map((n) => [n]), maxParallel: 2, maxRetries: 0, retryInterval: 1 },
        { name: 'bravo', leads: numbers(3, 50).map((n) => [n]), maxParallel: 2, maxRetries: 0, retryInterval: 1 },
      ],
    });
    const workspace = ws;
    fs.appendFileSync(workspace.configPath, ['accounts:', '  - name: acme', '    token_env: ACME_TOKEN', '  - name: globex', '    token_env: GLOBEX_TOKEN', ''].join('\n'));
    // Each campaign names its account; bravo's assistant is globex's own.
    const edit = (name: string, change: Record<string, unknown>): void => {
      const file = path.join(workspace.dir, 'campaigns', `${name}.yaml`);
      fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), ...change }, null, 2)}\n`);
    };
    edit('alpha', { account: 'acme' });
    edit('bravo', { account: 'globex', assistant_id: assistantB });
    const env = { ...daemonEnv(null), ACME_TOKEN: SECRETS.token, GLOBEX_TOKEN: TOKEN_B };
    // Each account's assistant posts its calls' webhooks to the daemon, which matches each to
    // its account through the call. (By polling alone, the call list's first reads come 10 s
    // apart while the durations are learnt: the same run took ~50 s.)
    await sim.setWebhook(webhookUrl(workspace));
    await sim.setWebhook(webhookUrl(workspace), { assistant: assistantB, token: TOKEN_B });

    const good = await runCampaignd(['validate', '--online', '--config', workspace.configPath], env);
    expect(good.stdout).toMatch(/0 errors/);
    expect(good.code).toBe(0);
    // globex's token given to acme: acme's campaign names an assistant that token does not see.
    const crossed = await runCampaignd(['validate', '--online', '--config', workspace.configPath], { ...env, ACME_TOKEN: TOKEN_B });
    expect(crossed.code).not.toBe(0);
    expect(crossed.stdout + crossed.stderr).toMatch(/alpha\.yaml.*assistant_id/);
    const wrong = await runCampaignd(['validate', '--online', '--config', workspace.configPath], { ...env, GLOBEX_TOKEN: 'tok-wrong-DO-NOT-LOG' });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout + wrong.stderr).toMatch(/the service rejected the API token of account globex/);

    const daemon = await startDaemon(workspace, env);
    for (const name of ['alpha', 'bravo']) {
      await waitUntil(async () => (await campaignState(workspace, name)) === 'completed', { timeoutMs: 60_000, intervalMs: 200, message: `campaign ${name} completed` });
    }
    const calls = await sim.calls();
    expect(calls.filter((c) => (c as { assistant_id?: number }).assistant_id === assistantB)).toHaveLength(3);
    expect(calls).toHaveLength(6);
    // Every call's webhook taken by the daemon, globex's as well as acme's.
    // (The simulator records an answer after the daemon has applied it: awaited, not assumed.)
    let deliveries: SimWebhookJson[] = [];
    const answered = async (): Promise<Set<number>> => new Set((deliveries = await sim.webhooks()).filter((d) => d.status === 200).map((d) => d.callId));
    await waitUntil(async () => (await answered()).size === calls.length, { timeoutMs: 10_000, message: () => `every call's webhook answered 200: ${JSON.stringify(deliveries)}` });
    expect(await answered()).toEqual(new Set(calls.map((c) => c.id)));
    expect(new Set(deliveries.map((d) => d.userIndex)).size).toBe(2);

    const status = await runCampaignd(['status', '--json', '--config', workspace.configPath]);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.accounts?.map((a) => [a.name, a.api, a.pid, a.lease_expires_at])).toEqual([
      ['acme', 'ok', daemon.pid, null],
      ['globex', 'ok', daemon.pid, null],
    ]);
    for (const a of report.accounts ?? []) expect(a.requests.sent).toBeGreaterThan(3);
    const human = await runCampaignd(['status', '--config', workspace.configPath]);
    expect(human.stdout).toMatch(/^ACCOUNTS$/m);
    const metrics = await httpGet(`${workspace.httpUrl}/metrics`);
    expect(metrics.body).toMatch(/^campaignd_account_requests_total\{account="globex"\} \d+$/m);
    for (const account of ['acme', 'globex']) {
      expect(metrics.body).toMatch(new RegExp(`^campaignd_account_dialing\\{account="${account}"\\} 1$`, 'm'));
      expect(metrics.body).toMatch(new RegExp(`^campaignd_account_api_ok\\{account="${account}"\\} 1$`, 'm'));
    }

    expect((await httpGet(`${workspace.httpUrl}/readyz`)).status).toBe(200);
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });

    // globex's token rejected: the daemon stays ready for acme (a balancer keeps sending it
    // acme's webhooks), and /readyz names the account that is not.
    const halfDaemon = await startDaemon(workspace, { ...env, GLOBEX_TOKEN: 'tok-wrong-DO-NOT-LOG' });
    let ready = await httpGet(`${workspace.httpUrl}/readyz`);
    await waitUntil(async () => (ready = await httpGet(`${workspace.httpUrl}/readyz`)).body.includes('globex rejected by the service'), { timeoutMs: 30_000, intervalMs: 200, message: () => `readyz naming globex: ${ready.status} ${ready.body}` });
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ checks: { database: 'ok', accounts: '1 of 2 ok; globex rejected by the service' } });
    const halfMetrics = (await httpGet(`${workspace.httpUrl}/metrics`)).body;
    expect(halfMetrics).toMatch(/^campaignd_account_api_ok\{account="globex"\} 0$/m);
    expect(halfMetrics).toMatch(/^campaignd_account_api_ok\{account="acme"\} 1$/m);
    expect(await halfDaemon.stop()).toEqual({ code: 0, signal: null });
    const outputs = [daemon.stdout(), daemon.stderr(), halfDaemon.stdout(), halfDaemon.stderr(), ready.body, status.stdout, human.stdout, metrics.body, good.stdout, crossed.stdout, wrong.stdout, wrong.stderr];
    assertNoSecrets(outputs, 'the daemon and CLI output');
    for (const t of outputs) expect(t).not.toContain(TOKEN_B);
  }, 120_000);
});

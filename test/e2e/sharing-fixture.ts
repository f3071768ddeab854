// The files of several active instances sharing accounts on one PostgreSQL database
// (docs/several-instances.md), as the ha-accounts e2e tests write them: one campaign per
// account naming its account and its token's assistant, one token variable per account,
// and one daemon file per instance, alike but for its HTTP port.
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../helpers/processes.js';
import { daemonEnv, makeWorkspace, numbers, type Workspace } from './daemon-fixture.js';

export interface SharingWorkspace {
  /** What makeWorkspace made (its cleanup removes the files). */
  ws: Workspace;
  /** The same, with the PostgreSQL database the instances share. */
  workspace: Workspace;
  /** The instances' environment: the database URL without its password, PGPASSWORD, each account's token. */
  env: Record<string, string>;
  /** The test database's password (it must reach no output). */
  password: string;
  /** The `accounts:` block, and a daemon file with it but without http's port set per instance. */
  accountsYaml: string;
  base: string;
  /** Each instance's HTTP port and daemon file, in order. */
  ports: number[];
  configs: string[];
}

export async function sharingWorkspace(opts: {
  simUrl: string;
  databaseUrl: string;
  accounts: readonly string[];
  tokens: readonly string[];
  /** Each account's assistant (its token's own). */
  assistants: readonly number[];
  leadsPerAccount: number;
  maxParallel: number;
  leaseSeconds: number;
  /** Lines added under each account in `accounts:` (its rate_limit, say). */
  accountExtra?: readonly string[];
  /** webhook.register: true (each instance sets the assistants of the accounts it takes to its own address). */
  webhookRegister?: boolean;
  /** Instances to write a daemon file for: the first listens on the workspace's port, the others on free ones. */
  instances: number;
}): Promise<SharingWorkspace> {
  const { accounts } = opts;
  const ws = await makeWorkspace({
    simUrl: opts.simUrl,
    campaigns: accounts.map((name, i) => ({ name: `c-${name}`, leads: numbers(opts.leadsPerAccount, i * 100).map((n) => [n]), maxParallel: opts.maxParallel, maxRetries: 0, retryInterval: 1 })),
  });
  const workspace: Workspace = { ...ws, databaseUrl: opts.databaseUrl };
  for (const [i, name] of accounts.entries()) {
    const file = path.join(workspace.dir, 'campaigns', `c-${name}.yaml`);
    fs.writeFileSync(file, `${JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), account: name, assistant_id: opts.assistants[i] }, null, 2)}\n`);
  }
  const url = new URL(opts.databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env: Record<string, string> = { ...daemonEnv(null), CAMPAIGND_DATABASE: url.toString(), PGPASSWORD: password };
  accounts.forEach((name, i) => (env[`${name.toUpperCase()}_TOKEN`] = opts.tokens[i]!));
  const accountsYaml = ['accounts:', ...accounts.flatMap((name) => [`  - name: ${name}`, `    token_env: ${name.toUpperCase()}_TOKEN`, ...(opts.accountExtra ?? [])]), ''].join('\n');
  const register = opts.webhookRegister ? 'webhook:\n  register: true\n' : '';
  const base = `${fs.readFileSync(workspace.configPath, 'utf8').replace(/^database: .*$/m, '')}${register}ha:\n  lease_seconds: ${opts.leaseSeconds}\n${accountsYaml}`;
  const ports = [workspace.httpPort, ...(await Promise.all(Array.from({ length: opts.instances - 1 }, () => freePort())))];
  const configs = ports.map((port, i) => {
    const configPath = path.join(workspace.dir, `campaignd-${i}.yaml`);
    fs.writeFileSync(configPath, base.replace(/listen: 127\.0\.0\.1:\d+/, `listen: 127.0.0.1:${port}`));
    return configPath;
  });
  return { ws, workspace, env, password, accountsYaml, base, ports, configs };
}

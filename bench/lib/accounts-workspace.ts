// The files a user with many accounts writes (README, "Many accounts"): one daemon config
// listing N accounts (each its own token_env, its own live-call cap, the service's default
// budget of 20 per 10 s and 100 a minute), and one campaign per account naming it, with
// its own lead file. Account i is the simulator's token i, whose outbound assistant is
// 2i + 1 (the simulator gives each token its own assistants). Every lead has its own
// number, in a block per account, so a call in the simulator's record names its account.
import fs from 'node:fs';
import path from 'node:path';
import { numbers } from '../../test/e2e/daemon-fixture.js';

/** Numbers per account: account i's leads are +1555 (2,000,000 + i × BLOCK + k). */
const BLOCK = 10_000;
const FIRST = 2_000_000;
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

export interface AccountsWorkspaceOptions {
  dir: string;
  accounts: number;
  leadsPerAccount: number;
  /** Each account's max_calls_in_parallel (and its one campaign's). */
  slots: number;
  /** One daemon config per port (campaignd-0.yaml …): several active instances on PostgreSQL. */
  httpPorts: readonly number[];
  /** `webhook.public_url`: where the service posts webhooks (a load balancer before several instances); default each daemon's own address. */
  publicUrl?: string;
  /** The simulator's URL. */
  baseUrl: string;
  /** `database:`: a SQLite file, or a postgres:// URL without its password. */
  database: string;
}

export interface AccountsWorkspace {
  /** One per instance, in the order of `httpPorts`. */
  configPaths: string[];
  /** The daemon's environment: one token variable per account. */
  env: Record<string, string>;
}

/** The simulator's token of each account (account i is the simulator's user i). */
export function accountTokens(accounts: number): string[] {
  return Array.from({ length: accounts }, (_, i) => `tok-bench-${String(i).padStart(3, '0')}-DO-NOT-LOG`);
}

export const accountName = (i: number): string => `acct-${String(i).padStart(3, '0')}`;
const tokenEnv = (i: number): string => `BENCH_TOKEN_${String(i).padStart(3, '0')}`;

/** The account (index) a lead's number belongs to, or -1 for a number not of this workspace. */
export function accountOfNumber(phone: string): number {
  const n = Number(phone.slice(5)) - FIRST;
  return phone.startsWith('+1555') && n >= 0 ? Math.floor(n / BLOCK) : -1;
}

/** Writes campaignd.yaml, campaigns/ and leads/ into `opts.dir`. */
export function writeAccountsWorkspace(opts: AccountsWorkspaceOptions): AccountsWorkspace {
  if (opts.leadsPerAccount > BLOCK) throw new Error(`at most ${BLOCK} leads per account (got ${opts.leadsPerAccount})`);
  fs.mkdirSync(path.join(opts.dir, 'campaigns'), { recursive: true });
  fs.mkdirSync(path.join(opts.dir, 'leads'), { recursive: true });
  const tokens = accountTokens(opts.accounts);
  const yaml = (httpPort: number): string =>
    [
      'api:',
      `  base_url: ${opts.baseUrl}`,
      `database: ${opts.database}`,
      'campaigns_dir: ./campaigns',
      `http: { listen: "127.0.0.1:${httpPort}" }`,
      // Each account's assistant sends its post-call webhooks to this daemon (or the load
      // balancer before the instances), as a user sets it up.
      `webhook: { register: true${opts.publicUrl ? `, public_url: "${opts.publicUrl}"` : ''} }`,
      'log: { level: info }',
      'accounts:',
      ...tokens.flatMap((_, i) => [`  - name: ${accountName(i)}`, `    token_env: ${tokenEnv(i)}`, `    max_calls_in_parallel: ${opts.slots}`]),
      '',
    ].join('\n');
  const configPaths = opts.httpPorts.map((port, i) => {
    const configPath = path.join(opts.dir, `campaignd-${i}.yaml`);
    fs.writeFileSync(configPath, yaml(port));
    return configPath;
  });
  for (let i = 0; i < opts.accounts; i++) {
    const name = accountName(i);
    fs.writeFileSync(path.join(opts.dir, 'leads', `${name}.csv`), `phone_number\n${numbers(opts.leadsPerAccount, i * BLOCK).join('\n')}\n`);
    const campaign = {
      name,
      account: name,
      assistant_id: 2 * i + 1,
      timezone: 'UTC',
      allowed_days: DAYS,
      allowed_hours_start_time: '00:00:00',
      allowed_hours_end_time: '00:00:00',
      max_calls_in_parallel: opts.slots,
      max_retries: 0,
      retry_interval: 60,
      mark_complete_when_no_leads: true,
      default_country: 'US',
      leads: { file: `../leads/${name}.csv` },
    };
    // JSON is YAML.
    fs.writeFileSync(path.join(opts.dir, 'campaigns', `${name}.yaml`), `${JSON.stringify(campaign, null, 2)}\n`);
  }
  return { configPaths, env: Object.fromEntries(tokens.map((t, i) => [tokenEnv(i), t])) };
}

// accounts: in the daemon file and account: in a campaign (README, "Many accounts"): what
// loads, what is refused and how, and that a token never reaches a problem's text.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { campaignAccount, daemonAccounts } from '../../src/config/accounts.js';
import { daemonConfigHasErrors, loadConfig } from '../../src/config/load.js';
import { readAccountToken } from '../../src/config/token.js';
import type { LoadedConfig } from '../../src/config/types.js';

// Every folder a test made (some load twice), removed after it.
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
/** The folder of the latest load. */
const lastDir = (): string => dirs.at(-1)!;

const campaign = (name: string, account?: string): string =>
  `name: ${name}\n${account ? `account: ${account}\n` : ''}assistant_id: 12\nallowed_days: [monday]\nallowed_hours_start_time: '09:00'\nallowed_hours_end_time: '17:00'\nleads:\n  file: leads.csv\n`;

/** Writes a daemon file and campaign files into a fresh folder and loads them. */
async function loadWith(daemonYaml: string, campaigns: Record<string, string>, env: Record<string, string> = {}): Promise<LoadedConfig> {
  const dir = await mkdtemp(path.join(tmpdir(), 'campaignd-accounts-'));
  dirs.push(dir);
  await mkdir(path.join(dir, 'campaigns'));
  await writeFile(path.join(dir, 'campaigns', 'leads.csv'), 'phone_number\n+12025550100\n');
  for (const [file, text] of Object.entries(campaigns)) await writeFile(path.join(dir, 'campaigns', file), text);
  await writeFile(path.join(dir, 'campaignd.yaml'), `api:\n  base_url: https://service.example\ncampaigns_dir: ./campaigns\ndatabase: ':memory:'\n${daemonYaml}`);
  return loadConfig(path.join(dir, 'campaignd.yaml'), env);
}

const TWO_ACCOUNTS = `accounts:
  - name: acme
    token_file: ./acme-token
    rate_limit: { requests_per_minute: 60, burst: 10 }
    max_calls_in_parallel: 5
  - name: globex
    token_env: GLOBEX_TOKEN
`;

describe('config: accounts', () => {
  it('without accounts:, the api: block is the one account "default", exactly as before', async () => {
    const loaded = await loadWith('max_calls_in_parallel: 7\n', { 'a.yaml': campaign('a') });
    expect(loaded.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(loaded.daemon.accounts).toBeUndefined();
    expect(daemonAccounts(loaded.daemon)).toEqual([{ name: 'default', rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 }, maxCallsInParallel: 7 }]);
    expect(campaignAccount(loaded.campaigns[0]!, daemonAccounts(loaded.daemon))).toBe('default');
  });

  it('loads each account with its token source, its own budget (defaults filled) and cap; a campaign names its account', async () => {
    const loaded = await loadWith(TWO_ACCOUNTS, { 'a.yaml': campaign('a', 'acme'), 'b.yaml': campaign('b', 'globex') });
    expect(loaded.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(loaded.daemon.accounts).toEqual([
      { name: 'acme', tokenFile: path.join(lastDir(), 'acme-token'), rateLimit: { requestsPerMinute: 60, burst: 10, burstWindowSeconds: 10 }, maxCallsInParallel: 5 },
      { name: 'globex', tokenEnv: 'GLOBEX_TOKEN', rateLimit: { requestsPerMinute: 100, burst: 20, burstWindowSeconds: 10 } },
    ]);
    expect(loaded.campaigns.map((c) => [c.name, c.account])).toEqual([
      ['a', 'acme'],
      ['b', 'globex'],
    ]);
  });

  it('refuses an unknown account in a campaign, naming the file, the field and the accounts there are', async () => {
    const loaded = await loadWith(TWO_ACCOUNTS, { 'a.yaml': campaign('a', 'initech') });
    const p = loaded.problems.find((x) => x.field === 'account');
    expect(p).toMatchObject({ severity: 'error', message: 'unknown account "initech"', line: 2 });
    expect(p?.file).toBe(path.join(lastDir(), 'campaigns', 'a.yaml'));
    expect(p?.hint).toContain('acme, globex');
    expect(loaded.brokenCampaigns.map((b) => b.name)).toEqual(['a']);
  });

  it('with several accounts a campaign must name one; account: without accounts: is refused too', async () => {
    const several = await loadWith(TWO_ACCOUNTS, { 'a.yaml': campaign('a') });
    expect(several.problems.find((x) => x.field === 'account')?.message).toMatch(/missing field "account"/);
    const none = await loadWith('', { 'a.yaml': campaign('a', 'acme') });
    expect(none.problems.find((x) => x.field === 'account')).toMatchObject({ message: 'unknown account "acme"' });
    expect(none.problems.find((x) => x.field === 'account')?.hint).toMatch(/accounts:/);
  });

  it('refuses a duplicate name and an account with both or neither token source, in the daemon file', async () => {
    const dup = await loadWith(`accounts:\n  - name: acme\n    token_env: A\n  - name: acme\n    token_env: B\n`, {});
    expect(dup.problems.find((p) => p.field === 'accounts[1].name')).toMatchObject({ severity: 'error', message: 'the account name "acme" is used twice', line: 8 });
    expect(daemonConfigHasErrors(dup)).toBe(true);
    const both = await loadWith(`accounts:\n  - name: acme\n    token_env: A\n    token_file: ./t\n`, {});
    expect(both.problems.find((p) => p.message.includes('sets both'))?.hint).toBe('give exactly one of token_file, token_env');
    const neither = await loadWith(`accounts:\n  - name: acme\n`, {});
    expect(neither.problems.find((p) => p.message.includes('needs one of'))).toBeDefined();
    expect(daemonConfigHasErrors(neither)).toBe(true);
  });

  it("reads each account's token from its own source, and a problem names the setting, never a token", async () => {
    const loaded = await loadWith(TWO_ACCOUNTS, {});
    const [acme, globex] = loaded.daemon.accounts!;
    const missing = await readAccountToken(loaded.daemon, acme!, {});
    expect(missing.problem).toBe(`cannot read the token file ${path.join(lastDir(), 'acme-token')} (accounts[0].token_file): it does not exist`);
    await writeFile(path.join(lastDir(), 'acme-token'), 'secret-acme-token\n');
    expect((await readAccountToken(loaded.daemon, acme!, {})).token).toBe('secret-acme-token');
    expect((await readAccountToken(loaded.daemon, globex!, { GLOBEX_TOKEN: 'secret-globex' })).token).toBe('secret-globex');
    const unset = await readAccountToken(loaded.daemon, globex!, { CAMPAIGND_API_TOKEN: 'secret-default' });
    expect(unset.token).toBeUndefined();
    expect(unset.problem).toBe('no API token: the environment variable GLOBEX_TOKEN is not set or empty');
  });
});

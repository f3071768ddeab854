import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/server.js';
import { systemClock } from '../../src/time/clock.js';
import { shebangNodeFlags } from '../../bench/lib/compiled-app.js';
import { readRepoFile, repoRoot, type ComposeService } from '../helpers/deploy-files.js';

// deploy/compose-accounts.yaml and campaignd-accounts.conf need Docker and systemd, which the
// suite does not run; what can break silently in an edit is checked here: the three
// instances stay interchangeable, every account has its token and a campaign whose assistant
// that token's user owns in the simulator, the balancer knows every instance, and the
// systemd credentials are the files the accounts read, and the heap ceiling is one node takes.

const root = repoRoot;
const read = readRepoFile;
type Service = ComposeService;

const compose = parse(read('deploy/compose-accounts.yaml'), { merge: true }) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };
const names = ['campaignd-a', 'campaignd-b', 'campaignd-c'];
const instances = names.map((name) => compose.services[name]!);
const simTokens = (() => {
  const command = compose.services.simulator!.command!;
  return command.flatMap((arg, i) => (command[i - 1] === '--token' ? [arg] : []));
})();

/** The config as a container sees /etc/campaignd: the file, campaigns/ and leads/ mounted next to it. */
async function mountedConfig(env: Record<string, string>) {
  const etc = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-accounts-etc-'));
  try {
    for (const mount of instances[0]!.volumes!) {
      const [from, to] = mount.split(':') as [string, string];
      const target = path.join(etc, path.posix.relative('/etc/campaignd', to));
      if (fs.statSync(path.join(root, 'deploy', from)).isDirectory()) fs.symlinkSync(path.join(root, 'deploy', from), target);
      else fs.copyFileSync(path.join(root, 'deploy', from), target);
    }
    return await loadConfig(path.join(etc, 'campaignd.yaml'), env);
  } finally {
    fs.rmSync(etc, { recursive: true, force: true });
  }
}

describe('deploy/compose-accounts.yaml', () => {
  let sim: RunningSimulator | undefined;
  afterAll(async () => sim?.close());

  it('runs three instances of one image on one config, told apart only by hostname and published port', () => {
    const same = (s: Service) => ({ image: s.image, command: s.command, environment: s.environment, volumes: s.volumes, secrets: s.secrets, healthcheck: s.healthcheck });
    for (const s of instances) expect(same(s)).toEqual(same(instances[0]!));
    expect(instances.map((s) => s.hostname)).toEqual(names);
    const url = new URL(instances[0]!.environment!.CAMPAIGND_DATABASE!);
    expect(url.password).toBe('');
    expect(read('deploy/compose-accounts.yaml')).not.toContain(read(path.join('deploy', compose.secrets.pg_password!.file)).trim());
  });

  it('gives them a config the daemon accepts: three accounts, each token from the environment, each with its campaign, on PostgreSQL', async () => {
    const loaded = await mountedConfig({ ...instances[0]!.environment, CAMPAIGND_WEBHOOK_SECRET: 'w', CAMPAIGND_DASHBOARD_TOKEN: 'd' });
    expect(loaded.problems).toEqual([]);
    expect(loaded.daemon.database).toMatch(/^postgres:\/\//);
    expect(loaded.daemon.accounts?.map((a) => a.name)).toEqual(['acme', 'globex', 'initech']);
    expect(loaded.campaigns.map((c) => [c.name, c.account])).toEqual([
      ['acme', 'acme'],
      ['globex', 'globex'],
      ['initech', 'initech'],
    ]);
  });

  it("names for each campaign an assistant its account's token owns in the simulator, whose webhook the setup points at the balancer", async () => {
    const loaded = await mountedConfig({ ...instances[0]!.environment, CAMPAIGND_WEBHOOK_SECRET: 'w', CAMPAIGND_DASHBOARD_TOKEN: 'd' });
    sim = await startSimulator({ clock: systemClock, tokens: simTokens });
    const env = instances[0]!.environment!;
    const setup = compose.services['webhook-setup']!.entrypoint!.join(' ');
    for (const account of loaded.daemon.accounts!) {
      const token = env[account.tokenEnv!]!;
      expect(simTokens).toContain(token);
      const res = await fetch(`${sim.url}/api/user/assistants/outbound`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
      const body = (await res.json()) as { data?: { id: number }[] } | { id: number }[];
      const owned = (Array.isArray(body) ? body : (body.data ?? [])).map((a) => Number(a.id));
      const campaign = loaded.campaigns.find((c) => c.account === account.name)!;
      expect(owned, `${account.name}'s assistant`).toContain(campaign.assistantId);
      expect(setup).toContain(`['${token}', ${campaign.assistantId}]`);
    }
  });

  it('balances the webhooks over all three instances, logging no request line (the URL holds the secret)', () => {
    const haproxy = read('deploy/compose-accounts/haproxy.cfg');
    for (const name of names) expect(haproxy).toContain(`server ${name} ${name}:9464`);
    expect(haproxy).not.toMatch(/^\s*log\s/m);
    expect(compose.services.lb!.volumes).toContain('./compose-accounts/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
  });
});

describe('deploy/campaignd-accounts.conf (systemd drop-in)', () => {
  const lines = read('deploy/campaignd-accounts.conf')
    .split('\n')
    .filter((line) => line.startsWith('LoadCredential='))
    .map((line) => line.slice('LoadCredential='.length));

  it("first drops the unit's single token credential (a missing credential file fails the start), then loads one per account", () => {
    expect(read('deploy/campaignd.service')).toMatch(/^LoadCredential=token:/m);
    expect(lines[0]).toBe('');
    const accounts = (parse(read('deploy/compose-accounts/campaignd.yaml')) as { accounts: { name: string }[] }).accounts.map((a) => a.name);
    expect(lines.slice(1)).toEqual(accounts.map((name) => `${name}:/etc/campaignd/tokens/${name}`));
  });
});

describe('the heap ceiling of a many-accounts daemon', () => {
  const unitValue = /^Environment=NODE_OPTIONS=(.*)$/m.exec(read('deploy/campaignd-accounts.conf'))?.[1];

  it('is the same in the systemd drop-in and in every compose instance, and node takes it beside the bin\'s own flags', () => {
    expect(unitValue).toMatch(/^--max-old-space-size=\d+$/);
    for (const s of instances) expect(s.environment!.NODE_OPTIONS).toBe(unitValue);
    // An option node does not take in NODE_OPTIONS stops it from starting: the daemon would never run.
    const binFlags = shebangNodeFlags(path.join(root, 'bin/campaignd.js')).split(/\s+/).filter(Boolean);
    const limit = execFileSync(process.execPath, [...binFlags, '-p', "require('node:v8').getHeapStatistics().heap_size_limit"], {
      env: { ...process.env, NODE_OPTIONS: unitValue },
      encoding: 'utf8',
    });
    const mb = Number(/=(\d+)$/.exec(unitValue!)![1]);
    // The limit is the old space's ceiling plus the young generation's.
    expect(Number(limit) / 2 ** 20).toBeGreaterThanOrEqual(mb);
    expect(Number(limit) / 2 ** 20).toBeLessThan(mb + 64);
  });
});


import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { readRepoFile, repoRoot, type ComposeService } from '../helpers/deploy-files.js';

// The PostgreSQL recipes of deploy/ need Docker and systemd, which the suite does not
// run; what can break silently in an edit is checked here: the two instances stay
// interchangeable, and no password lands in a URL or in campaignd's YAML.

const root = repoRoot;
const read = readRepoFile;
type Service = ComposeService;
interface Compose {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
}

const compose = parse(read('deploy/compose-ha.yaml'), { merge: true }) as Compose;
const config = parse(read('deploy/compose-ha/campaignd.yaml')) as Record<string, unknown> & { database: string; database_password_file: string };
const instances = ['campaignd-a', 'campaignd-b'].map((name) => compose.services[name]!);

function postgresUrl(text: string): URL {
  const url = new URL(text);
  expect(url.protocol).toBe('postgres:');
  expect(url.password).toBe('');
  return url;
}

describe('deploy/compose-ha.yaml', () => {
  it('runs two instances of one image on one config, told apart only by hostname and published port', () => {
    const [a, b] = instances as [Service, Service];
    const same = (s: Service) => ({ image: s.image, command: s.command, environment: s.environment, volumes: s.volumes, secrets: s.secrets, healthcheck: s.healthcheck });
    expect(same(a)).toEqual(same(b));
    expect(a.volumes).toContain('./compose-ha/campaignd.yaml:/etc/campaignd/campaignd.yaml:ro');
    expect([a.hostname, b.hostname]).toEqual(['campaignd-a', 'campaignd-b']);
    for (const s of instances) expect(s.healthcheck?.test?.join(' ')).toContain('/healthz');
  });

  it('points both at the PostgreSQL service by a URL without a password, the same in the environment and the config', () => {
    const fromEnv = instances[0]!.environment!.CAMPAIGND_DATABASE!;
    expect(fromEnv).toBe(config.database);
    const url = postgresUrl(fromEnv);
    const postgres = compose.services[url.hostname]!;
    expect(postgres.image).toMatch(/^postgres:/);
    expect(postgres.healthcheck?.test).toContain('pg_isready');
  });

  it('keeps the password in a compose secret that PostgreSQL and both instances read, never in the YAML', () => {
    const secret = path.posix.basename(config.database_password_file);
    expect(config.database_password_file).toBe(`/run/secrets/${secret}`);
    expect(compose.secrets[secret]).toBeDefined();
    for (const s of instances) expect(s.secrets).toContain(secret);
    expect(compose.services.postgres!.environment!.POSTGRES_PASSWORD_FILE).toBe(`/run/secrets/${secret}`);
    const password = fs.readFileSync(path.join(root, 'deploy', compose.secrets[secret]!.file), 'utf8').trim();
    expect(read('deploy/compose-ha.yaml')).not.toContain(password);
    expect(read('deploy/compose-ha/campaignd.yaml')).not.toContain(password);
  });

  it('gives both a config the daemon accepts, as mounted in their containers', async () => {
    // /etc/campaignd as a container sees it: the config, and the repository's config/ as example/.
    const etc = fs.mkdtempSync(path.join(os.tmpdir(), 'campaignd-ha-etc-'));
    try {
      fs.copyFileSync(path.join(root, 'deploy/compose-ha/campaignd.yaml'), path.join(etc, 'campaignd.yaml'));
      fs.symlinkSync(path.join(root, 'config'), path.join(etc, 'example'));
      const env = { ...instances[0]!.environment, CAMPAIGND_WEBHOOK_SECRET: 'w', CAMPAIGND_DASHBOARD_TOKEN: 'd' };
      const loaded = await loadConfig(path.join(etc, 'campaignd.yaml'), env);
      expect(loaded.problems).toEqual([]);
      expect(loaded.daemon.database).toBe(config.database);
      expect(loaded.campaigns.map((c) => c.name)).toEqual(['demo', 'follow-up']);
    } finally {
      fs.rmSync(etc, { recursive: true, force: true });
    }
  });

  it('sends the post-call webhooks to a load balancer that knows both instances', () => {
    const setup = compose.services['webhook-setup']!.entrypoint!.join(' ');
    expect(setup).toContain("webhook_url: 'http://lb:8080/webhooks/post-call?secret='");
    const haproxy = read('deploy/compose-ha/haproxy.cfg');
    expect(haproxy).toMatch(/^\s*bind :8080$/m);
    for (const name of ['campaignd-a', 'campaignd-b']) expect(haproxy).toContain(`server ${name} ${name}:9464`);
    // The webhook URL holds the secret: haproxy must log no request line.
    expect(haproxy).not.toMatch(/^\s*log\s/m);
  });
});

describe('deploy/campaignd-postgres.conf (systemd drop-in)', () => {
  const dropIn = read('deploy/campaignd-postgres.conf');
  const settings = dropIn
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  const values = (key: string) => settings.filter(([k]) => k === key).map(([, v]) => v);

  it('drops the state directory and names the database by a URL without a password', () => {
    expect(values('StateDirectory')).toEqual(['']);
    const database = values('Environment').find((v) => v.startsWith('CAMPAIGND_DATABASE='));
    postgresUrl(database!.slice('CAMPAIGND_DATABASE='.length));
  });

  it('hands the password over as a credential and waits for the network', () => {
    expect(values('LoadCredential')).toEqual(['pgpassword:/etc/campaignd/pgpassword']);
    expect(values('After')).toContain('network-online.target');
    expect(values('Wants')).toContain('network-online.target');
  });
});

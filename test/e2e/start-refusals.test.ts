// Every reason `campaignd run` refuses to start is one `campaignd validate` reports: both
// call the same checks (src/config/start-checks.ts), and here both run through the bin on
// the same workspace. Each problem line run prints must appear, word for word, among
// validate's. Not config, and so not validate's: a database a running daemon holds and a
// port taken by another program (validate is made to run beside the daemon, which holds
// both); run says the port in one line (last test).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openStore } from '../../src/store/open-store.js';
import { runCampaignd } from '../helpers/processes.js';
import { daemonEnv, makeWorkspace, SECRETS, type Workspace } from './daemon-fixture.js';

let ws: Workspace | undefined;
afterEach(() => {
  ws?.cleanup();
  ws = undefined;
});

async function workspace(): Promise<Workspace> {
  return makeWorkspace({ simUrl: 'http://127.0.0.1:9', campaigns: [{ name: 'c', leads: [['+15552000000']], maxParallel: 1, maxRetries: 0, retryInterval: 1 }] });
}

function edit(w: Workspace, change: (yaml: string) => string): void {
  fs.writeFileSync(w.configPath, change(fs.readFileSync(w.configPath, 'utf8')));
}

interface Refusal {
  name: string;
  setup(w: Workspace): Promise<void> | void;
  env?: Record<string, string>;
  /** What run's stderr says (and so validate's output must hold). */
  said: RegExp;
  /** run's exit code. */
  code: number;
  /** Refused in one line (a newer database), not a problem list followed by a closing line. */
  oneLine?: boolean;
}

const REFUSALS: Refusal[] = [
  {
    name: 'an error in the daemon file',
    setup: (w) => edit(w, (y) => `${y}max_calls_in_parallel: lots\n`),
    said: /max_calls_in_parallel: must be a whole number, not "lots"/,
    code: 2,
  },
  {
    name: 'a bad CAMPAIGND_LOG_LEVEL',
    setup: () => {},
    env: { CAMPAIGND_LOG_LEVEL: 'chatty' },
    said: /\$CAMPAIGND_LOG_LEVEL: "chatty" is not a log level/,
    code: 2,
  },
  {
    name: 'http.dashboard_token_env naming an unset variable',
    setup: (w) => edit(w, (y) => y.replace(/^( {2}listen: .+)$/m, '$1\n  dashboard_token_env: CAMPAIGND_DASHBOARD_TOKEN')),
    said: /http\.dashboard_token_env: names CAMPAIGND_DASHBOARD_TOKEN, but that environment variable is empty or not set/,
    code: 2,
  },
  {
    name: 'a non-loopback http.listen without a dashboard token',
    setup: (w) => edit(w, (y) => y.replace(/^ {2}listen: .+$/m, '  listen: 0.0.0.0:0')),
    said: /http\.listen: 0\.0\.0\.0 is not a loopback address, and the dashboard has no token/,
    code: 2,
  },
  {
    name: 'webhook.register on a non-loopback http.listen without webhook.public_url',
    setup: (w) =>
      edit(w, (y) => y.replace(/^ {2}listen: .+$/m, '  listen: 0.0.0.0:0\n  dashboard_token_env: CAMPAIGND_DASHBOARD_TOKEN').replace(/^database:/m, 'webhook:\n  register: true\ndatabase:')),
    env: { CAMPAIGND_DASHBOARD_TOKEN: 'dash-E2E-do-not-print' },
    said: /webhook\.register: needs webhook\.public_url: http\.listen is 0\.0\.0\.0/,
    code: 2,
  },
  {
    name: 'a database_password_file that cannot be read',
    setup: (w) => edit(w, (y) => y.replace(/^database: .+$/m, 'database: postgres://campaignd@127.0.0.1:9/campaignd\ndatabase_password_file: ./no-such-password')),
    said: /database_password_file: cannot read database_password_file .*no-such-password: no such file/,
    code: 2,
  },
  {
    name: 'a database written by a newer campaignd',
    setup: async (w) => {
      fs.mkdirSync(path.dirname(w.dbPath), { recursive: true });
      const store = await openStore(w.dbPath);
      await migrateToLatest(store.db, { clock: { now: () => 0 } });
      await sql`insert into schema_migrations (version, applied_at) values ('9999_from_the_future', 0)`.execute(store.db);
      await store.close();
    },
    said: /database schema 9999 is newer than this campaignd/,
    code: 3,
    // Said as every command says it: one line naming the database (the problem is validate's too).
    oneLine: true,
  },
];

describe('run refuses to start only for what validate reports', () => {
  for (const r of REFUSALS) {
    it(`${r.name}: run exits ${r.code}, validate lists the same problem`, async () => {
      ws = await workspace();
      await r.setup(ws);
      const env = { ...daemonEnv(), ...r.env };
      const run = await runCampaignd(['run', '--config', ws.configPath], env);
      expect(run.code, run.stderr).toBe(r.code);
      expect(run.stderr).toMatch(r.said);
      const validate = await runCampaignd(['validate', '--config', ws.configPath], env);
      expect(validate.code, validate.stdout + validate.stderr).toBe(1);
      // Each problem line of run's (all but its closing "campaignd run: …" line) is one of validate's.
      const problemLines = run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('campaignd run:') && !l.startsWith('campaignd: warning'));
      const validateLines = validate.stdout.split('\n');
      if (r.oneLine) expect(run.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
      else expect(problemLines.length).toBeGreaterThan(0);
      for (const line of problemLines) expect(validateLines, `validate's output lacks: ${line}`).toContain(line);
      expect(validate.stdout).toMatch(r.said);
      for (const text of [run.stdout, run.stderr, validate.stdout, validate.stderr]) {
        expect(text).not.toContain(SECRETS.token);
        expect(text).not.toContain(SECRETS.webhook);
        expect(text).not.toContain('dash-E2E-do-not-print');
      }
    });
  }

  it('a port another program holds: not config (validate beside the daemon sees it held), so run says it in one line, exit 1', async () => {
    ws = await workspace();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(ws!.httpPort, '127.0.0.1', resolve));
    try {
      const run = await runCampaignd(['run', '--config', ws.configPath], daemonEnv());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`campaignd run: http.listen 127.0.0.1:${ws.httpPort}: the address is in use by another program (another campaignd?): stop it, or set http.listen to a free port\n`);
      expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('a config that cannot be read: both exit 2 with the same words', async () => {
    ws = await workspace();
    edit(ws, (y) => `${y}  bad: [\n`);
    const run = await runCampaignd(['run', '--config', ws.configPath], daemonEnv());
    const validate = await runCampaignd(['validate', '--config', ws.configPath], daemonEnv());
    expect(run.code).toBe(2);
    expect(validate.code).toBe(2);
    const first = run.stderr.split('\n')[0]!;
    expect(validate.stderr.split('\n')).toContain(first);
  });

  it('validate says "0 errors" only when run starts', async () => {
    ws = await workspace();
    const validate = await runCampaignd(['validate', '--config', ws.configPath], daemonEnv());
    expect(validate.code).toBe(0);
    expect(validate.stdout).toMatch(/0 errors/);
  });
});

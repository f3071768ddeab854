// What `campaignd run` checks before it starts, beyond each field on its own: settings
// that are wrong only together with the environment (a dashboard open to the network
// without a token, a token variable that is empty, a password file that cannot be read).
// `run` refuses to start on any of them and `validate` lists them: both call
// `startProblems`, so the two can never disagree about whether the daemon starts.
import { existsSync } from 'node:fs';
import { isPostgresUrl } from '../store/database-url.js';
import { assertSchemaKnown, NewerSchemaError, schemaStatus } from '../store/migrate.js';
import { openStore, PasswordFileError, storePassword } from '../store/open-store.js';
import { ProblemSink } from './problems.js';
import type { ConfigProblem, DaemonConfig, LoadedConfig } from './types.js';

/** Whether `host` (as http.listen holds it) is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\./.test(h);
}

export interface ExposureProblem {
  field: 'http.dashboard_token_env' | 'http.listen';
  message: string;
  hint: string;
}

/**
 * Why the dashboard must not be served with this setting, or null. It can pause campaigns
 * and shows who was called: without a token it stays on loopback. Names variables, never values.
 */
export function dashboardExposure(http: DaemonConfig['http'], token: string | undefined): ExposureProblem | null {
  if (http.dashboardTokenEnv !== undefined && !token) {
    return {
      field: 'http.dashboard_token_env',
      message: `names ${http.dashboardTokenEnv}, but that environment variable is empty or not set`,
      hint: 'set it to a long random token (e.g. openssl rand -hex 32), or remove http.dashboard_token_env',
    };
  }
  if (!token && !isLoopback(http.host)) {
    return {
      field: 'http.listen',
      message: `${http.host} is not a loopback address, and the dashboard has no token`,
      hint: 'set http.dashboard_token_env to the name of an environment variable holding a long random token, or listen on 127.0.0.1',
    };
  }
  return null;
}

/** The dashboard token from the variable http.dashboard_token_env names; undefined when none. */
export function dashboardTokenOf(daemon: DaemonConfig, env: Record<string, string | undefined>): string | undefined {
  return daemon.http.dashboardTokenEnv === undefined ? undefined : env[daemon.http.dashboardTokenEnv] || undefined;
}

/**
 * Every reason `run` would refuse to start that the daemon file's own checks do not see,
 * as errors with file, line and field. Secrets are read to be checked, never shown.
 */
export async function startProblems(loaded: LoadedConfig, env: Record<string, string | undefined>): Promise<ConfigProblem[]> {
  const daemon = loaded.daemon;
  const sink = new ProblemSink(daemon.file, loaded.daemonSource);
  sink.problems.push(...settingProblems(daemon, loaded.daemonSource, env));
  try {
    await storePassword(daemon.database, env, daemon.databasePasswordFile);
  } catch (err) {
    if (!(err instanceof PasswordFileError)) throw err;
    sink.error(['database_password_file'], err.message, { hint: 'create the file (its first line is the password), fix the path, or set PGPASSWORD' });
  }
  await newerSchema(daemon.database, sink);
  return sink.problems;
}

/**
 * The start checks that need only the daemon file and the environment (no file system, no
 * database): cheap enough for every command that reads the daemon file, so `status` or
 * `leads import` warn of what `run` would refuse.
 */
export function settingProblems(daemon: DaemonConfig, source: LoadedConfig['daemonSource'] | undefined, env: Record<string, string | undefined>): ConfigProblem[] {
  const sink = new ProblemSink(daemon.file, source);
  const exposed = dashboardExposure(daemon.http, dashboardTokenOf(daemon, env));
  if (exposed) sink.error(exposed.field.split('.'), exposed.message, { hint: exposed.hint });
  webhookRegistration(daemon, sink);
  return sink.problems;
}

/** webhook.register needs an address the service can reach: said before the daemon registers a wrong one. */
function webhookRegistration(daemon: DaemonConfig, sink: ProblemSink): void {
  if (!daemon.webhook.register || daemon.webhook.publicUrl) return;
  if (!isLoopback(daemon.http.host)) {
    sink.error(['webhook', 'register'], `needs webhook.public_url: http.listen is ${daemon.http.host}, which is no address the service can be given`, {
      hint: 'set webhook.public_url to the address the service reaches this daemon at, e.g. https://campaignd.example',
    });
    return;
  }
  let serviceHost = '';
  try {
    serviceHost = new URL(daemon.api.baseUrl).hostname;
  } catch {
    return; // api.base_url has its own error
  }
  if (!isLoopback(serviceHost)) {
    sink.warning(['webhook', 'register'], `the service at ${serviceHost} would be given the loopback address ${daemon.http.host}, which it cannot reach`, {
      hint: 'set webhook.public_url to the address the service reaches this daemon at',
    });
  }
}

/** Problems that stop `run` as a database it must not touch (exit 3) rather than as a config (exit 2). */
const databaseRefusals = new WeakSet<ConfigProblem>();

/** Whether `run` refuses this problem as a database it must not touch (exit 3). */
export function isDatabaseRefusal(problem: ConfigProblem): boolean {
  return databaseRefusals.has(problem);
}

/**
 * A SQLite file written by a newer campaignd, which `run` refuses (exit 3). Read-only, so
 * it works beside a running daemon. A file not there yet is created by `run`; a PostgreSQL
 * server is not dialled from here (validate works offline).
 */
async function newerSchema(database: string, sink: ProblemSink): Promise<void> {
  if (database === ':memory:' || isPostgresUrl(database) || !existsSync(database)) return;
  let handle: Awaited<ReturnType<typeof openStore>>;
  try {
    handle = await openStore(database, { readonly: true });
  } catch {
    return; // not a database campaignd can open: `run` says why when it tries
  }
  try {
    assertSchemaKnown(await schemaStatus(handle.db));
  } catch (err) {
    if (!(err instanceof NewerSchemaError)) return;
    sink.error(['database'], err.message, { hint: 'run the campaignd that wrote it, or point database at another file' });
    databaseRefusals.add(sink.problems.at(-1)!);
  } finally {
    await handle.close();
  }
}

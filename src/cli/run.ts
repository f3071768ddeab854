import { DashboardExposureError, startApp } from '../app.js';
import { ConfigUnreadableError, daemonConfigErrors, loadConfig } from '../config/load.js';
import { dashboardTokenOf, isDatabaseRefusal, startProblems } from '../config/start-checks.js';
import { formatProblems } from '../config/format.js';
import { readToken } from '../config/token.js';
import { encodeTokenSource, tokenAdvice, type TokenSource } from '../config/token-source.js';
import type { LoadedConfig } from '../config/types.js';
import { engineClientFrom } from '../engine/service-port.js';
import { registerWebhook } from '../lifecycle/register-webhook.js';
import { createMetrics } from '../http/metrics.js';
import { DatabaseInUseError } from '../lifecycle/daemon-row.js';
import { createLogger, type Logger } from '../log/logger.js';
import { createServiceClient } from '../service/client.js';
import { describeTarget } from '../store/database-url.js';
import { NewerSchemaError } from '../store/migrate.js';
import { systemClock, type Clock } from '../time/clock.js';
import { version } from '../version.js';
import { resolveConfigPath } from './config-path.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { storeOpenError } from './open-store.js';

export const RUN_HELP = `campaignd run: the daemon. Loads the config, migrates the database, dials until stopped.

Usage: campaignd run [--config FILE]

  --config FILE   daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  -h, --help      this help

Signals: SIGTERM/SIGINT stop claiming, let in-flight make_call requests finish (at most
10 s), record everything and exit 0; a second signal exits at once. SIGHUP rereads the
campaign files, lead files, the suppression list and the token file.
Environment: CAMPAIGND_API_TOKEN, CAMPAIGND_API_BASE_URL, CAMPAIGND_DATABASE,
CAMPAIGND_LOG_LEVEL, the webhook secret variable and the dashboard token variable
(http.dashboard_token_env) the config names.
`;

/** Options the demo and tests use to run the daemon in-process. */
export interface RunHooks {
  clock?: Clock;
  logger?: Logger;
  /** Resolves when the daemon should stop (instead of waiting for signals). */
  stopSignal?: AbortSignal;
  onStarted?: (info: { httpPort: number | null }) => void;
  /** Do not install process signal handlers. */
  noSignals?: boolean;
}

/** `campaignd run`: the daemon's composition from argv and the environment. */
export async function runCommand(args: string[], io: CliIo, hooks: RunHooks = {}): Promise<number> {
  const { values } = parseCommandArgs({ args, options: { config: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }, RUN_HELP);
  if (values.help) {
    io.stdout.write(RUN_HELP);
    return EXIT.ok;
  }
  const configPath = resolveConfigPath(values.config, io);
  const config = await loadOrExplain(configPath, io);
  const clock = hooks.clock ?? systemClock;
  const daemon = config.daemon;

  let token: string | undefined;
  let tokenProblem: string | undefined;
  let tokenSource: TokenSource | undefined;
  const webhookSecret = (): string | undefined => io.env[daemon.webhook.secretEnv] || undefined;
  const dashboardToken = dashboardTokenOf(daemon, io.env);
  const logger =
    hooks.logger ??
    createLogger({
      level: io.env.CAMPAIGND_LOG_LEVEL ?? daemon.log.level,
      pretty: io.stdout.isTTY === true,
      secrets: () => [token, webhookSecret(), dashboardToken].filter((s): s is string => typeof s === 'string'),
    });
  const readTokenNow = async (): Promise<void> => {
    const read = await readToken(daemon, io.env);
    token = read.token;
    tokenProblem = read.problem;
    tokenSource = read.source;
    if (tokenProblem) logger.error({ problem: tokenProblem }, `no usable API token: dialing waits until there is one; ${tokenAdvice(read.source)}`);
  };
  await readTokenNow();
  for (const p of config.problems) {
    const entry = { file: p.file, line: p.line, field: p.field, hint: p.hint };
    if (p.severity === 'error') logger.error(entry, p.message);
    else logger.warn(entry, p.message);
  }
  if (!webhookSecret()) logger.warn({ env: daemon.webhook.secretEnv }, 'no webhook secret set: post-call webhooks are refused and outcomes come from polling only');

  const metrics = createMetrics();
  const service = createServiceClient({
    baseUrl: daemon.api.baseUrl,
    getToken: () => token ?? '',
    clock,
    logger,
    serverTimezone: daemon.api.serverTimezone,
    rateLimit: daemon.api.rateLimit,
    onRequest: (e) => {
      metrics.apiRequests.inc({ endpoint: e.endpoint, status: e.status === null ? 'error' : String(e.status) });
      if (e.kind === 'rate-limited') metrics.apiRateLimited.inc();
      if (e.waitedMs > 0) metrics.rateBudgetWait.inc(e.waitedMs / 1000);
    },
  });

  let app;
  try {
    app = await startApp({
      config,
      clock,
      logger,
      client: engineClientFrom(service),
      leadSource: service,
      webhookSecret,
      version: await version(),
      metrics,
      tokenProblem: () => tokenProblem,
      tokenSource: () => encodeTokenSource(tokenSource!),
      dashboardToken,
      apiCounters: () => {
        const b = service.budget.stats();
        return { sent: b.sent, rateLimited: b.rateLimited, budgetWaitMs: b.waitedMs };
      },
    });
  } catch (err) {
    await service.close();
    if (err instanceof NewerSchemaError) throw storeOpenError(err, describeTarget(daemon.database));
    if (err instanceof DatabaseInUseError) throw new CliError(err.message, EXIT.database);
    if (err instanceof DashboardExposureError) throw new CliError(err.message, EXIT.usage);
    const listenProblem = listenFailure(err, daemon.http);
    if (listenProblem) throw new CliError(listenProblem, EXIT.problems);
    throw err;
  }
  // webhook.register: the assistants' webhook_url points here, at start and after each SIGHUP.
  const registerWebhookNow = async (current: LoadedConfig): Promise<void> => {
    if (!current.daemon.webhook.register || app.httpPort === null) return;
    if (!token) {
      logger.warn('webhook.register: no usable API token, so no webhook is registered yet (it is after the token is fixed)');
      return;
    }
    await registerWebhook({ client: service, config: current, boundPort: app.httpPort, secret: webhookSecret(), logger });
  };
  await registerWebhookNow(config);
  hooks.onStarted?.({ httpPort: app.httpPort });
  logger.info({ version: await version(), campaigns: config.campaigns.map((c) => c.name), pid: process.pid }, 'campaignd running');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (why: string): void => {
      if (stopping) {
        logger.warn('second stop signal: exiting at once');
        process.exit(130);
      }
      stopping = true;
      logger.info({ why }, 'stopping: no new calls; waiting for in-flight requests (at most 10 s)');
      void app
        .stop(10_000)
        .then(() => service.close())
        .then(() => {
          logger.info('stopped cleanly');
          resolve(EXIT.ok);
        })
        .catch((err: unknown) => {
          logger.error({ err: String(err) }, 'error while stopping');
          resolve(EXIT.problems);
        })
        .finally(removeHandlers);
    };
    const reload = (): void => {
      logger.info('SIGHUP: reloading campaign files, lead files, suppression list and token');
      void (async () => {
        try {
          await readTokenNow();
          const fresh = await loadConfig(configPath, io.env, { cwd: io.cwd });
          for (const p of fresh.problems.filter((x) => x.severity === 'error')) logger.error({ file: p.file, line: p.line, field: p.field }, p.message);
          await app.reload(fresh);
          await app.engine.tokenChanged();
          await registerWebhookNow(fresh);
          logger.info('reload done');
        } catch (err) {
          logger.error({ err: err instanceof Error ? err.message : String(err) }, 'reload failed; the previous configuration stays in force');
        }
      })();
    };
    const onTerm = (): void => stop('SIGTERM');
    const onInt = (): void => stop('SIGINT');
    function removeHandlers(): void {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      process.off('SIGHUP', reload);
    }
    if (!hooks.noSignals) {
      process.on('SIGTERM', onTerm);
      process.on('SIGINT', onInt);
      process.on('SIGHUP', reload);
    }
    hooks.stopSignal?.addEventListener('abort', () => stop('requested'), { once: true });
  });
}

async function loadOrExplain(configPath: string, io: CliIo): Promise<LoadedConfig> {
  let config: LoadedConfig;
  try {
    config = await loadConfig(configPath, io.env, { cwd: io.cwd });
  } catch (err) {
    if (err instanceof ConfigUnreadableError) {
      io.stderr.write(`${formatProblems(err.problems)}\n`);
      throw new CliError(err.message, EXIT.usage);
    }
    throw err;
  }
  // The same checks `validate` makes (start-checks.ts): whatever stops the start here is listed there.
  const checks = await startProblems(config, io.env);
  const refusals = [...daemonConfigErrors(config), ...checks.filter((p) => p.severity === 'error')];
  for (const p of checks.filter((x) => x.severity === 'warning')) io.stderr.write(`${formatProblems([p], { cwd: io.cwd })}\n`);
  // A database written by a newer campaignd alone: one line and exit 3, as every other command says it.
  if (refusals.length > 0 && refusals.every(isDatabaseRefusal)) {
    throw new CliError(`${describeTarget(config.daemon.database)}: ${refusals.map((p) => p.message).join('; ')}`, EXIT.database);
  }
  if (refusals.length > 0) {
    io.stderr.write(`${formatProblems(refusals, { cwd: io.cwd })}\n`);
    throw new CliError(`the daemon cannot start with ${configPath} (see above; "campaignd validate" lists every problem)`, EXIT.usage);
  }
  return config;
}

/**
 * http.listen could not be bound: one line instead of node's stack. Not a check `validate`
 * can make (beside a running daemon the port is rightly taken), and exit 1, not 2: a port
 * that frees up lets a supervisor's next restart succeed.
 */
function listenFailure(err: unknown, http: { host: string; port: number }): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  const where = `http.listen ${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}`;
  if (code === 'EADDRINUSE') return `${where}: the address is in use by another program (another campaignd?): stop it, or set http.listen to a free port`;
  if (code === 'EACCES') return `${where}: permission denied (ports below 1024 need privileges): use a port from 1024 up`;
  if (code === 'EADDRNOTAVAIL') return `${where}: no interface of this machine has that address: use 127.0.0.1, 0.0.0.0 or one of its addresses`;
  return null;
}

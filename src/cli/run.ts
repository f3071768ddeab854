import { DashboardExposureError, SharingModeError, startApp } from '../app.js';
import { ConfigUnreadableError, daemonConfigErrors, loadConfig } from '../config/load.js';
import { dashboardTokenOf, isDatabaseRefusal, startProblems } from '../config/start-checks.js';
import { formatProblems } from '../config/format.js';
import { readAccountToken, type TokenRead } from '../config/token.js';
import { encodeTokenSource, tokenAdvice } from '../config/token-source.js';
import { campaignAccount, daemonAccounts } from '../config/accounts.js';
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

  // Each account's token (one, "default", without accounts:): reread on SIGHUP, never logged.
  const accounts = daemonAccounts(daemon);
  const first = accounts[0]!;
  const tokens = new Map<string, TokenRead>();
  const tokenOf = (name: string): string | undefined => tokens.get(name)?.token;
  const webhookSecret = (): string | undefined => io.env[daemon.webhook.secretEnv] || undefined;
  const dashboardToken = dashboardTokenOf(daemon, io.env);
  const logger =
    hooks.logger ??
    createLogger({
      level: io.env.CAMPAIGND_LOG_LEVEL ?? daemon.log.level,
      pretty: io.stdout.isTTY === true,
      secrets: () => [...[...tokens.values()].map((t) => t.token), webhookSecret(), dashboardToken].filter((s): s is string => typeof s === 'string'),
    });
  const readTokenNow = async (): Promise<void> => {
    for (const account of accounts) {
      const read = await readAccountToken(daemon, account, io.env);
      tokens.set(account.name, read);
      const where = accounts.length > 1 ? { account: account.name } : {};
      if (read.problem) logger.error({ ...where, problem: read.problem }, `no usable API token: dialing waits until there is one; ${tokenAdvice(read.source)}`);
    }
  };
  await readTokenNow();
  for (const p of config.problems) {
    const entry = { file: p.file, line: p.line, field: p.field, hint: p.hint };
    if (p.severity === 'error') logger.error(entry, p.message);
    else logger.warn(entry, p.message);
  }
  if (!webhookSecret()) logger.warn({ env: daemon.webhook.secretEnv }, 'no webhook secret set: post-call webhooks are refused and outcomes come from polling only');

  const metrics = createMetrics();
  // One client per account: each has its own rate budget (both windows, X-RateLimit-*, 429s).
  const clients = new Map(
    accounts.map((account) => [
      account.name,
      createServiceClient({
        baseUrl: daemon.api.baseUrl,
        getToken: () => tokenOf(account.name) ?? '',
        clock,
        logger: accounts.length > 1 ? logger.child({ account: account.name }) : logger,
        serverTimezone: daemon.api.serverTimezone,
        rateLimit: account.rateLimit,
        onRequest: (e) => {
          metrics.apiRequests.inc({ endpoint: e.endpoint, status: e.status === null ? 'error' : String(e.status) });
          metrics.accountRequests.inc({ account: account.name });
          if (e.kind === 'rate-limited') {
            metrics.apiRateLimited.inc();
            metrics.accountRateLimited.inc({ account: account.name });
          }
          if (e.waitedMs > 0) metrics.rateBudgetWait.inc(e.waitedMs / 1000);
        },
      }),
    ]),
  );
  const service = clients.get(first.name)!;
  const closeClients = async (): Promise<void> => {
    for (const c of clients.values()) await c.close();
  };
  // webhook.register: the assistants' webhook_url points here, before the first call and
  // after each SIGHUP. Each account's assistants are set with its own token, the accounts at
  // once; `only` names the accounts to set (several active instances: those this one holds).
  const registerWebhookNow = async (current: LoadedConfig, httpPort: number | null, only?: readonly string[]): Promise<void> => {
    if (!current.daemon.webhook.register || httpPort === null) return;
    await Promise.all(
      accounts.filter((account) => only === undefined || only.includes(account.name)).map(async (account) => {
        const where = accounts.length > 1 ? { account: account.name } : {};
        if (!tokenOf(account.name)) {
          logger.warn(where, 'webhook.register: no usable API token, so no webhook is registered yet (it is after the token is fixed)');
          return;
        }
        const own = accounts.length > 1 ? { ...current, campaigns: current.campaigns.filter((c) => campaignAccount(c, accounts) === account.name) } : current;
        await registerWebhook({ client: clients.get(account.name)!, config: own, boundPort: httpPort, secret: webhookSecret(), logger: accounts.length > 1 ? logger.child(where) : logger });
      }),
    );
  };
  let reloaded: LoadedConfig | null = null;
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
      tokenProblem: () => tokens.get(first.name)?.problem,
      tokenSource: () => encodeTokenSource(tokens.get(first.name)!.source),
      dashboardToken,
      apiCounters: () => {
        const b = [...clients.values()].map((c) => c.budget.stats());
        const sum = (f: (x: (typeof b)[number]) => number): number => b.reduce((n, x) => n + f(x), 0);
        return { sent: sum((x) => x.sent), rateLimited: sum((x) => x.rateLimited), budgetWaitMs: sum((x) => x.waitedMs) };
      },
      accounts: accounts.map((a) => ({ name: a.name, client: engineClientFrom(clients.get(a.name)!), maxCallsInParallel: a.maxCallsInParallel })),
      accountBudgets: {
        ages: (name) => clients.get(name)?.budget.recentAges() ?? [],
        seed: (name, ages) => clients.get(name)?.budget.seed(ages),
        handedOn: (name) => clients.get(name)?.budget.forgetSettled(),
      },
      // An account taken after a SIGHUP is set up by the file as reloaded.
      beforeDialing: (httpPort, only) => registerWebhookNow(reloaded ?? config, httpPort, only),
      accountFacts: (name) => {
        const c = clients.get(name);
        if (!c) return undefined;
        const b = c.budget.stats();
        return { requests: { sent: b.sent, rateLimited: b.rateLimited }, tokenProblem: tokens.get(name)?.problem };
      },
    });
  } catch (err) {
    await closeClients();
    if (err instanceof NewerSchemaError) throw storeOpenError(err, describeTarget(daemon.database));
    if (err instanceof DatabaseInUseError) throw new CliError(err.message, EXIT.database);
    if (err instanceof DashboardExposureError || err instanceof SharingModeError) throw new CliError(err.message, EXIT.usage);
    const listenProblem = listenFailure(err, daemon.http);
    if (listenProblem) throw new CliError(listenProblem, EXIT.problems);
    throw err;
  }
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
        .then(closeClients)
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
          reloaded = fresh;
          await app.engine.tokenChanged();
          await registerWebhookNow(fresh, app.httpPort, app.ownAccounts());
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

// `campaignd validate [--config FILE] [--online] [--json]`: every problem of the daemon file,
// the campaign files, the lead files and the do-not-call list, in one run. Offline by default.
// Exit 0: no error (warnings allowed); 1: errors; 2: the config cannot be read at all.
import { checkLeadFile, checkSuppressionFile, type LeadFileSummary } from '../config/check-data-files.js';
import { formatProblems, summarizeProblems } from '../config/format.js';
import { ConfigUnreadableError, loadConfig } from '../config/load.js';
import { checkOnline, type OutboundAssistantLister } from '../config/online-check.js';
import { readAccountToken, readToken } from '../config/token.js';
import { campaignAccount, daemonAccounts } from '../config/accounts.js';
import { startProblems } from '../config/start-checks.js';
import type { ConfigProblem, LoadedConfig } from '../config/types.js';
import { resolveConfigPath } from './config-path.js';
import { previewCampaigns, renderPreview, type CampaignPreview } from '../explain/preview.js';
import { parseCommandArgs } from './args.js';
import { CliError, EXIT, type CliIo } from './io.js';
import { openReadStore } from './open-store.js';

const USAGE = `Usage: campaignd validate [--config FILE] [--online] [--preview] [--json]

Checks the daemon config, every campaign file, every lead file and the do-not-call list,
and prints every problem with its file, line and field. Works offline. It makes every check
\`campaignd run\` makes before starting (with this shell's environment: the dashboard token,
the database password file, the database's schema), so "0 errors" means run starts.

Options:
  --config FILE  daemon config (default: $CAMPAIGND_CONFIG, then ./config/campaignd.yaml)
  --online       also check the API token and that each campaign's assistant exists and is outbound
  --preview      also count, per campaign, the stored leads that can be called now, later
                 today, not today or never, and why (the reasons of explain)
  --json         print one JSON document instead of text
  -h, --help     this help

Exit status: 0 no errors (warnings allowed), 1 errors found, 2 the config cannot be read.
`;

/** Builds the service port for --online; replaced in tests. */
export type ServiceFactory = (loaded: LoadedConfig, token: string) => Promise<OutboundAssistantLister & { close?: () => Promise<void> }>;

/** The `validate` command. */
export async function validateCommand(args: string[], io: CliIo, serviceFactory: ServiceFactory = defaultServiceFactory): Promise<number> {
  const { values } = parseCommandArgs({
    args,
    options: { config: { type: 'string', short: 'c' }, online: { type: 'boolean' }, preview: { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  }, USAGE);
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  const configPath = resolveConfigPath(values.config, io);
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(configPath, io.env, { cwd: io.cwd });
  } catch (err) {
    if (!(err instanceof ConfigUnreadableError)) throw err;
    if (values.json) io.stdout.write(`${JSON.stringify({ ok: false, config: configPath, readable: false, problems: err.problems }, null, 2)}\n`);
    else io.stderr.write(`${formatProblems(err.problems, { cwd: io.cwd })}\ncampaignd validate: the config cannot be read\n`);
    return EXIT.usage;
  }

  const problems: ConfigProblem[] = [...loaded.problems];
  const leadFiles: LeadFileSummary[] = [];
  for (const campaign of loaded.campaigns) {
    const { problems: leadProblems, summary } = await checkLeadFile(campaign);
    problems.push(...leadProblems);
    if (summary) leadFiles.push(summary);
  }
  problems.push(...(await checkSuppressionFile(loaded.daemon)));
  // Exactly what `run` refuses to start with besides the files' own errors (start-checks.ts).
  problems.push(...(await startProblems(loaded, io.env)));
  problems.push(...(await environmentProblems(loaded, io.env, values.online === true, serviceFactory)));

  const summary = summarizeProblems(problems);
  const preview = values.preview ? await previewOrNote(loaded, io) : undefined;
  // A campaign is broken by an error in its own file, in its lead file, or found online.
  const errorFiles = new Set(problems.filter((p) => p.severity === 'error').map((p) => p.file));
  const campaigns = [
    ...loaded.campaigns.map((c) => ({ name: c.name, file: c.file, ok: !errorFiles.has(c.file) && !(c.leads.file && errorFiles.has(c.leads.file)) })),
    ...loaded.brokenCampaigns.map((b) => ({ name: b.name, file: b.file, ok: false })),
  ].sort((a, b) => a.file.localeCompare(b.file));
  if (values.json) {
    const document = { ok: summary.errors === 0, config: loaded.daemon.file, online: values.online === true, errors: summary.errors, warnings: summary.warnings, campaigns, lead_files: leadFiles, problems, ...(preview ? { preview } : {}) };
    io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  } else {
    if (problems.length > 0) io.stdout.write(`${formatProblems(problems, { cwd: io.cwd })}\n`);
    const good = campaigns.filter((c) => c.ok).map((c) => c.name);
    const bad = campaigns.filter((c) => !c.ok).map((c) => c.name);
    const parts = [`${summary.text}`, `${good.length} campaign${good.length === 1 ? '' : 's'} ok${good.length ? ` (${good.join(', ')})` : ''}`];
    if (bad.length) parts.push(`${bad.length} broken (${bad.join(', ')})`);
    if (values.online !== true) parts.push('offline');
    if (preview) io.stdout.write(typeof preview === 'string' ? `preview: ${preview}\n` : renderPreview(preview));
    io.stdout.write(`campaignd validate: ${parts.join('; ')}\n`);
  }
  return summary.errors === 0 ? EXIT.ok : EXIT.problems;
}

/** The preview of who may be called (docs/design.md §11) over the stored leads; a note instead when there is no store to read yet. */
async function previewOrNote(loaded: LoadedConfig, io: CliIo): Promise<CampaignPreview[] | string> {
  let store: Awaited<ReturnType<typeof openReadStore>>;
  try {
    // The loaded daemon config: its problems are listed above, not warned about again.
    store = await openReadStore(loaded.daemon, io);
  } catch (err) {
    if (err instanceof CliError) return `no leads to preview (${err.message})`;
    throw err;
  }
  try {
    const { systemClock } = await import('../time/clock.js');
    return await previewCampaigns(store.db, loaded.campaigns, systemClock.now(), { daemonMaxCalls: loaded.daemon.maxCallsInParallel });
  } finally {
    await store.close();
  }
}

// Token and webhook secret: missing ones are warnings offline (the daemon starts and says
// so), the token is an error when --online was asked for.
async function environmentProblems(loaded: LoadedConfig, env: CliIo['env'], online: boolean, serviceFactory: ServiceFactory): Promise<ConfigProblem[]> {
  const daemon = loaded.daemon;
  const problems: ConfigProblem[] = [];
  // Every account's token (one, the api: block's, without accounts:).
  const tokens: { account?: { name: string; tokenField: string }; token: string | undefined }[] = [];
  for (const [i, account] of (daemon.accounts ?? [undefined]).entries()) {
    const read = account ? await readAccountToken(daemon, account, env) : await readToken(daemon, env);
    const field = account ? (account.tokenFile !== undefined ? `accounts[${i}].token_file` : `accounts[${i}].token_env`) : daemon.api.tokenFile ? 'api.token_file' : undefined;
    if (read.problem) {
      const p: ConfigProblem = { file: daemon.file, message: read.problem, severity: online ? 'error' : 'warning' };
      if (field) p.field = field;
      if (!online) p.hint = 'the daemon starts without a token but places no calls until it has one';
      problems.push(p);
    }
    tokens.push({ ...(account && field ? { account: { name: account.name, tokenField: field } } : {}), token: read.token });
  }
  if (!env[daemon.webhook.secretEnv]) {
    problems.push({
      file: daemon.file,
      field: 'webhook.secret_env',
      message: `$${daemon.webhook.secretEnv} is not set, so post-call webhooks will be refused`,
      hint: 'set it to a long random value to receive webhooks; outcomes are still learned by polling',
      severity: 'warning',
    });
  }
  for (const c of loaded.campaigns) {
    if (c.predial && !env[c.predial.secretEnv]) {
      problems.push({
        file: c.file,
        field: 'predial.secret_env',
        message: `$${c.predial.secretEnv} is not set, so every pre-dial check of ${c.name} fails and its leads wait (none is called unchecked)`,
        hint: 'set it in the daemon\'s environment to the secret your check endpoint verifies',
        severity: 'warning',
      });
    }
  }
  if (online && daemon.api.baseUrl) {
    const accounts = daemonAccounts(daemon);
    for (const { account, token } of tokens) {
      if (!token) continue;
      // Each account's campaigns are checked against its own assistants, with its own token.
      const own = account ? { ...loaded, campaigns: loaded.campaigns.filter((c) => campaignAccount(c, accounts) === account.name) } : loaded;
      const service = await serviceFactory(loaded, token);
      try {
        problems.push(...(await checkOnline(own, service, account)));
      } finally {
        await service.close?.();
      }
    }
  }
  return problems;
}

// The CLI is a composition root: the real clock and a silent logger are chosen here.
const defaultServiceFactory: ServiceFactory = async (loaded, token) => {
  const [{ createServiceClient }, { systemClock }, { silentLogger }] = await Promise.all([
    import('../service/client.js'),
    import('../time/clock.js'),
    import('../log/logger.js'),
  ]);
  return createServiceClient({
    baseUrl: loaded.daemon.api.baseUrl,
    getToken: () => token,
    clock: systemClock,
    logger: silentLogger(),
    serverTimezone: loaded.daemon.api.serverTimezone,
    rateLimit: loaded.daemon.api.rateLimit,
  });
};

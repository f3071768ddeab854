// The daemon file: as written → checked against DAEMON_SPEC → environment overrides →
// normalised DaemonConfig with absolute paths. Pure apart from `path.resolve`.
import path from 'node:path';
import { DAEMON_SPEC, DEFAULT_LEASE_SECONDS, LOG_LEVELS } from './daemon-spec.js';
import { ProblemSink, sortByPosition } from './problems.js';
import { parseSource, type ParsedSource, type SyntaxProblem } from './source.js';
import { checkUrl } from './address.js';
import { checkValue, describe } from './spec.js';
import type { AccountConfig, ConfigProblem, DaemonConfig } from './types.js';
import { isPostgresUrl, urlHasPassword } from '../store/database-url.js';
import type { HookEventType } from '../store/results-hook-types.js';

export interface DaemonParseResult {
  /** Undefined only when the text does not parse at all. */
  daemon?: DaemonConfig;
  problems: ConfigProblem[];
  syntaxErrors: SyntaxProblem[];
  /** Position of a field in the daemon file, for checks made later (files that must exist). */
  locate: ParsedSource['locate'];
}

/** Parse and check the daemon file's text; env overrides apply; relative env paths resolve against `cwd`. */
export function parseDaemonFile(file: string, text: string, env: Record<string, string | undefined>, cwd: string): DaemonParseResult {
  const absolute = path.resolve(cwd, file);
  const source = parseSource(absolute, text);
  const sink = new ProblemSink(absolute, source);
  if (source.syntaxErrors.length > 0) return { problems: [], syntaxErrors: source.syntaxErrors, locate: source.locate };
  const value = source.value ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { problems: [], syntaxErrors: [{ line: 1, column: 1, message: 'the daemon file must be a mapping of fields (api:, database:, …)' }], locate: source.locate };
  }
  const written = (checkValue(DAEMON_SPEC, value, [], sink) ?? {}) as Written;
  const dir = path.dirname(absolute);
  const resolve = (p: string): string => (p === ':memory:' ? p : path.resolve(dir, p));

  let baseUrl = written.api?.base_url;
  const envSink = (name: string): ProblemSink => new ProblemSink(`$${name}`);
  const envUrl = nonEmpty(env.CAMPAIGND_API_BASE_URL);
  if (envUrl !== undefined) {
    const s = envSink('CAMPAIGND_API_BASE_URL');
    baseUrl = checkUrl(envUrl, ['api', 'base_url'], s) ?? baseUrl;
    sink.problems.push(...s.problems);
  } else if (baseUrl === undefined && (value as { api?: { base_url?: unknown } }).api?.base_url === undefined) {
    sink.error(['api', 'base_url'], 'missing required field "base_url"', { at: 'key', hint: 'add api.base_url (e.g. https://service.example) or set CAMPAIGND_API_BASE_URL' });
  }

  // A PostgreSQL URL stays a URL; a file resolves like every other path.
  let database = written.database ?? './data/campaignd.db';
  if (isPostgresUrl(database) && urlHasPassword(database)) {
    sink.error(['database'], 'the URL holds a password: a password never goes in the config file', {
      hint: 'remove it from the URL; set PGPASSWORD or database_password_file (a file readable by the daemon only)',
    });
  }
  const envDatabase = nonEmpty(env.CAMPAIGND_DATABASE);
  const place = (p: string, base: (p: string) => string): string => (p === ':memory:' || isPostgresUrl(p) ? p : base(p));
  database = envDatabase !== undefined ? place(envDatabase, (p) => path.resolve(cwd, p)) : place(database, resolve);

  let level = written.log?.level ?? 'info';
  const envLevel = nonEmpty(env.CAMPAIGND_LOG_LEVEL);
  if (envLevel !== undefined) {
    if ((LOG_LEVELS as readonly string[]).includes(envLevel.toLowerCase())) level = envLevel.toLowerCase();
    else sink.problems.push({ file: '$CAMPAIGND_LOG_LEVEL', message: `${describe(envLevel)} is not a log level`, hint: `use one of ${LOG_LEVELS.join(', ')}`, severity: 'error' });
  }

  const listen = written.http?.listen ?? { host: '127.0.0.1', port: 9464 };
  const daemon: DaemonConfig = {
    file: absolute,
    api: {
      baseUrl: baseUrl ?? '',
      rateLimit: {
        requestsPerMinute: written.api?.rate_limit?.requests_per_minute ?? 100,
        burst: written.api?.rate_limit?.burst ?? 20,
        burstWindowSeconds: written.api?.rate_limit?.burst_window_seconds ?? 10,
      },
      serverTimezone: written.api?.server_timezone ?? 'UTC',
    },
    database,
    campaignsDir: resolve(written.campaigns_dir ?? './campaigns'),
    http: { host: listen.host, port: listen.port, ...(written.http?.dashboard_token_env !== undefined ? { dashboardTokenEnv: written.http.dashboard_token_env } : {}) },
    webhook: {
      secretEnv: written.webhook?.secret_env ?? 'CAMPAIGND_WEBHOOK_SECRET',
      register: written.webhook?.register ?? false,
      ...(written.webhook?.public_url !== undefined ? { publicUrl: written.webhook.public_url.replace(/\/+$/, '') } : {}),
    },
    unknownAttemptSettleSeconds: written.unknown_attempt_settle_seconds ?? 180,
    log: { level },
    results: { keepTranscripts: written.results?.keep_transcripts ?? true, retentionDays: written.results?.retention_days ?? null },
    ha: { leaseSeconds: written.ha?.lease_seconds ?? DEFAULT_LEASE_SECONDS },
    hooks: (written.hooks ?? []).filter((h) => h.url && h.secret_env && h.events).map((h) => ({ url: h.url!, secretEnv: h.secret_env!, events: [...new Set(h.events!)] })),
  };
  if (written.api?.token_file !== undefined) daemon.api.tokenFile = resolve(written.api.token_file);
  if (written.accounts !== undefined) daemon.accounts = writtenAccounts(written.accounts, resolve, sink);
  if (written.database_password_file !== undefined) daemon.databasePasswordFile = resolve(written.database_password_file);
  if (written.max_calls_in_parallel !== undefined) daemon.maxCallsInParallel = written.max_calls_in_parallel;
  if (written.suppression_file !== undefined) daemon.suppressionFile = resolve(written.suppression_file);
  if (written.calling_rules !== undefined) daemon.callingRulesFile = resolve(written.calling_rules);
  if (written.max_attempts_per_number !== undefined) daemon.maxAttemptsPerNumber = { count: written.max_attempts_per_number.count, windowHours: written.max_attempts_per_number.window_hours };
  return { daemon, problems: sortByPosition(sink.problems), syntaxErrors: [], locate: source.locate };
}

/** The accounts as written, normalised; a second account of the same name is an error on it. */
function writtenAccounts(list: NonNullable<Written['accounts']>, resolve: (p: string) => string, sink: ProblemSink): AccountConfig[] {
  const out: AccountConfig[] = [];
  for (const [i, a] of list.entries()) {
    if (a.name === undefined || (a.token_file === undefined) === (a.token_env === undefined)) continue; // reported by the spec
    if (out.some((o) => o.name === a.name)) {
      sink.error(['accounts', i, 'name'], `the account name "${a.name}" is used twice`, { hint: 'give each account its own name' });
      continue;
    }
    const account: AccountConfig = {
      name: a.name,
      rateLimit: {
        requestsPerMinute: a.rate_limit?.requests_per_minute ?? 100,
        burst: a.rate_limit?.burst ?? 20,
        burstWindowSeconds: a.rate_limit?.burst_window_seconds ?? 10,
      },
    };
    if (a.token_file !== undefined) account.tokenFile = resolve(a.token_file);
    if (a.token_env !== undefined) account.tokenEnv = a.token_env;
    if (a.max_calls_in_parallel !== undefined) account.maxCallsInParallel = a.max_calls_in_parallel;
    out.push(account);
  }
  return out;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

// What checkValue(DAEMON_SPEC) returns: only fields that passed their checks.
interface Written {
  api?: {
    base_url?: string;
    token_file?: string;
    rate_limit?: { requests_per_minute?: number; burst?: number; burst_window_seconds?: number };
    server_timezone?: string;
  };
  database?: string;
  database_password_file?: string;
  campaigns_dir?: string;
  http?: { listen?: { host: string; port: number }; dashboard_token_env?: string };
  webhook?: { secret_env?: string; register?: boolean; public_url?: string };
  max_calls_in_parallel?: number;
  accounts?: {
    name?: string;
    token_file?: string;
    token_env?: string;
    rate_limit?: { requests_per_minute?: number; burst?: number; burst_window_seconds?: number };
    max_calls_in_parallel?: number;
  }[];
  suppression_file?: string;
  calling_rules?: string;
  max_attempts_per_number?: { count: number; window_hours: number };
  unknown_attempt_settle_seconds?: number;
  log?: { level?: string };
  results?: { keep_transcripts?: boolean; retention_days?: number };
  ha?: { lease_seconds?: number };
  hooks?: { url?: string; secret_env?: string; events?: HookEventType[] }[];
}
